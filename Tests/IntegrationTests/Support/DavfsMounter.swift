import DavgateTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Mounts one of davgate's domains (`files` unless told) with `mount.davfs`
/// under a temporary folder: its own davfs2.conf (`buf_size 256`, which
/// davfs2 1.6.1 needs on Linux 6.16 and newer; `trust_server_cert` with
/// davgate's self-signed certificate; uploads on close), its own secrets
/// file, and a cache folder per mount, group `davfs2` as mount.davfs demands
/// of a cache it runs in.
struct DavfsMounter {
    let mountDavfs: String
    let umount: String
    let home: URL
    let url: String
    let certificate: String
    let command: ClientCommand

    init(server: some GatewayEndpoint, mountDavfs: String, umount: String, domain: String = "files") throws {
        self.mountDavfs = mountDavfs
        self.umount = umount
        self.url = server.domainURL(domain).absoluteString
        certificate = server.certificate.path
        home = server.root.appendingPathComponent("davfs-home")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        let secrets = home.appendingPathComponent("secrets")
        try "\(url) admin \(server.adminPassword)\n".write(to: secrets, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: secrets.path)
        command = try ClientCommand(scratch: home.appendingPathComponent("scratch"), environment: ["HOME": home.path])
    }

    /// Mounts with a fresh cache folder named `cache` and returns the mount point.
    func mount(cache: String) async throws -> URL {
        let cacheDir = home.appendingPathComponent(cache)
        let mountPoint = home.appendingPathComponent("mnt-\(cache)")
        try FileManager.default.createDirectory(at: mountPoint, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: cacheDir, withIntermediateDirectories: true)
        let group = try #require(getgrnam("davfs2"), "the group davfs2 comes with the davfs2 package").pointee.gr_gid
        try #require(chown(cacheDir.path, 0, group) == 0, "chown \(cacheDir.path)")
        try FileManager.default.setAttributes([.posixPermissions: 0o775], ofItemAtPath: cacheDir.path)
        let conf = home.appendingPathComponent("davfs2-\(cache).conf")
        try """
            buf_size 256
            trust_server_cert \(certificate)
            secrets \(home.appendingPathComponent("secrets").path)
            cache_dir \(cacheDir.path)
            ask_auth 0
            use_locks 1
            delay_upload 0

            """.write(to: conf, atomically: true, encoding: .utf8)
        let mounted = try await command.run(mountDavfs, [url, mountPoint.path, "-o", "conf=\(conf.path)"], timeout: .seconds(60))
        try #require(mounted.succeeded, "mount.davfs \(url) (FUSE, as root): \(mounted)")
        return mountPoint
    }

    /// Runs `body`, then unmounts (which waits for davfs2's pending uploads),
    /// also when `body` fails, so that no mount outlives the test.
    func unmounting(_ mountPoint: URL, _ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch {
            _ = try? await command.run(umount, [mountPoint.path], timeout: .seconds(60))
            _ = try? await command.run(umount, ["-l", mountPoint.path], timeout: .seconds(10))
            throw error
        }
        var unmounted = try await command.run(umount, [mountPoint.path], timeout: .seconds(120))
        // A moment after the last write the kernel may still hold the mount
        // ("target is busy"); it is let go within a second or two, and more
        // than five on a loaded machine (seen with the integration suite
        // eight tests wide).
        for _ in 0..<20 where !unmounted.succeeded && "\(unmounted)".contains("busy") {
            try await Task.sleep(for: .seconds(1))
            unmounted = try await command.run(umount, [mountPoint.path], timeout: .seconds(120))
        }
        if !unmounted.succeeded { _ = try? await command.run(umount, ["-l", mountPoint.path], timeout: .seconds(10)) }
        #expect(unmounted.succeeded, "umount \(mountPoint.path): \(unmounted)")
    }

    /// davfs2 moves a file it could not upload (a 412 on its conditional PUT)
    /// into `lost+found`; it must stay empty.
    func expectNothingLost(_ mountPoint: URL) async throws {
        let lost = try FileManager.default.contentsOfDirectory(atPath: mountPoint.appendingPathComponent("lost+found").path)
        #expect(lost.isEmpty, "davfs2 gave up on uploads: lost+found holds \(lost)")
    }
}
