#define _GNU_SOURCE
#include "loader_tables.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef SHT_RELR
#define SHT_RELR 19
#endif

/// Larger than any section header table or name table of a real binary:
/// a bogus header is refused rather than allocated for.
#define LIMIT ((size_t)1 << 30)

/// The main program's load address and program headers: the first object
/// dl_iterate_phdr reports.
struct main_program {
    uintptr_t bias;
    const ElfW(Phdr) *headers;
    size_t count;
    int found;
};

static int first_object(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    struct main_program *program = data;
    program->bias = (uintptr_t)info->dlpi_addr;
    program->headers = info->dlpi_phdr;
    program->count = info->dlpi_phnum;
    program->found = 1;
    return 1;
}

/// Whether the loader wrote into the program's code (text relocations):
/// then its read-only segment holds private, written pages, which
/// MADV_DONTNEED would throw away.
static int has_text_relocations(const struct main_program *program) {
    for (size_t i = 0; i < program->count; i++) {
        if (program->headers[i].p_type != PT_DYNAMIC) continue;
        const ElfW(Dyn) *entry = (const ElfW(Dyn) *)(program->bias + program->headers[i].p_vaddr);
        for (; entry->d_tag != DT_NULL; entry++) {
            if (entry->d_tag == DT_TEXTREL) return 1;
            if (entry->d_tag == DT_FLAGS && (entry->d_un.d_val & DF_TEXTREL)) return 1;
        }
    }
    return 0;
}

/// Whether [start, end) (link-time addresses) lies in one loaded segment
/// that is not writable.
static int in_read_only_segment(const struct main_program *program, uintptr_t start, uintptr_t end) {
    for (size_t i = 0; i < program->count; i++) {
        const ElfW(Phdr) *header = &program->headers[i];
        if (header->p_type != PT_LOAD) continue;
        if (start >= header->p_vaddr && end <= header->p_vaddr + header->p_filesz)
            return !(header->p_flags & PF_W);
    }
    return 0;
}

static int is_loader_table(const ElfW(Shdr) *section, const char *name) {
    if (!(section->sh_flags & SHF_ALLOC) || (section->sh_flags & (SHF_WRITE | SHF_EXECINSTR))) return 0;
    switch (section->sh_type) {
    case SHT_DYNSYM: case SHT_GNU_HASH: case SHT_HASH: case SHT_RELA: case SHT_REL: case SHT_RELR:
    case SHT_GNU_versym: case SHT_GNU_verneed: case SHT_GNU_verdef:
        return 1;
    case SHT_STRTAB:
        return strcmp(name, ".dynstr") == 0;
    default:
        return 0;
    }
}

/// The link-time span of the loader tables, from the executable's section
/// headers (not mapped, so read from the file), the pages wholly inside it
/// and shared with no other loaded section. Returns 0 on success. Refuses
/// a file whose program headers are not the running program's (started as
/// `ld.so ./davgate`, /proc/self/exe is the loader).
static int table_span(const struct main_program *program, uintptr_t *start, uintptr_t *end) {
    int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    int result = -1;
    ElfW(Ehdr) header;
    ElfW(Shdr) *sections = NULL;
    char *names = NULL;
    if (pread(fd, &header, sizeof header, 0) != (ssize_t)sizeof header) goto done;
    if (memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_shentsize != sizeof(ElfW(Shdr))
        || header.e_shnum == 0 || header.e_shstrndx >= header.e_shnum) goto done;
    if (header.e_phentsize != sizeof(ElfW(Phdr)) || header.e_phnum != program->count) goto done;
    size_t headers_size = (size_t)header.e_phnum * sizeof(ElfW(Phdr));
    if (headers_size > LIMIT) goto done;
    ElfW(Phdr) *headers = malloc(headers_size);
    if (headers == NULL) goto done;
    int same = pread(fd, headers, headers_size, (off_t)header.e_phoff) == (ssize_t)headers_size
        && memcmp(headers, program->headers, headers_size) == 0;
    free(headers);
    if (!same) goto done;
    size_t table_size = (size_t)header.e_shnum * sizeof(ElfW(Shdr));
    sections = malloc(table_size);
    if (sections == NULL || pread(fd, sections, table_size, (off_t)header.e_shoff) != (ssize_t)table_size) goto done;
    const ElfW(Shdr) *strings = &sections[header.e_shstrndx];
    if (strings->sh_type != SHT_STRTAB || strings->sh_size > LIMIT) goto done;
    names = malloc(strings->sh_size + 1);
    if (names == NULL || pread(fd, names, strings->sh_size, (off_t)strings->sh_offset) != (ssize_t)strings->sh_size) goto done;
    names[strings->sh_size] = '\0';

    uintptr_t low = UINTPTR_MAX, high = 0;
    for (size_t i = 0; i < header.e_shnum; i++) {
        if (sections[i].sh_name >= strings->sh_size) continue;
        if (!is_loader_table(&sections[i], names + sections[i].sh_name)) continue;
        if (sections[i].sh_size > LIMIT || sections[i].sh_addr > UINTPTR_MAX - LIMIT) goto done;
        if (sections[i].sh_addr < low) low = sections[i].sh_addr;
        if (sections[i].sh_addr + sections[i].sh_size > high) high = sections[i].sh_addr + sections[i].sh_size;
    }
    if (low >= high) goto done;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    low = (low + page - 1) & ~(page - 1);
    high &= ~(page - 1);
    // Any other loaded section (the ELF header's page, notes, .init, code)
    // keeps its pages: the span ends where the first one begins. (Linkers
    // put the tables together; one interleaved would cost the part after
    // it, never a page it shares.)
    for (size_t i = 0; i < header.e_shnum; i++) {
        const ElfW(Shdr) *section = &sections[i];
        if (!(section->sh_flags & SHF_ALLOC) || section->sh_size == 0) continue;
        if (section->sh_name < strings->sh_size && is_loader_table(section, names + section->sh_name)) continue;
        if (section->sh_addr > UINTPTR_MAX - LIMIT || section->sh_size > LIMIT) goto done;
        uintptr_t from = section->sh_addr & ~(page - 1), to = section->sh_addr + section->sh_size;
        if (to <= low || from >= high) continue;
        if (from <= low) low = (to + page - 1) & ~(page - 1);
        else high = from;
        if (low >= high) goto done;
    }
    *start = low;
    *end = high;
    result = 0;
done:
    free(names);
    free(sections);
    close(fd);
    return result;
}

struct davgate_loader_tables davgate_find_loader_tables(void) {
    struct davgate_loader_tables tables = { NULL, 0 };
    struct main_program program = { 0, NULL, 0, 0 };
    dl_iterate_phdr(first_object, &program);
    uintptr_t start, end;
    if (!program.found || has_text_relocations(&program) || table_span(&program, &start, &end) != 0) return tables;
    if (start >= end || !in_read_only_segment(&program, start, end)) return tables;
    tables.start = (void *)(program.bias + start);
    tables.length = end - start;
    return tables;
}

/// MADV_DONTNEED on a span found above; the bytes advised, 0 if none.
static size_t release(struct davgate_loader_tables span) {
    if (span.length == 0 || madvise(span.start, span.length, MADV_DONTNEED) != 0) return 0;
    return span.length;
}

size_t davgate_release_loader_tables(void) {
    return release(davgate_find_loader_tables());
}

struct davgate_loader_tables davgate_find_code(void) {
    struct davgate_loader_tables code = { NULL, 0 };
    struct main_program program = { 0, NULL, 0, 0 };
    dl_iterate_phdr(first_object, &program);
    if (!program.found || has_text_relocations(&program)) return code;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    for (size_t i = 0; i < program.count; i++) {
        const ElfW(Phdr) *header = &program.headers[i];
        if (header->p_type != PT_LOAD || !(header->p_flags & PF_X) || (header->p_flags & PF_W)) continue;
        uintptr_t start = (program.bias + header->p_vaddr + page - 1) & ~(page - 1);
        uintptr_t end = (program.bias + header->p_vaddr + header->p_memsz) & ~(page - 1);
        if (end <= start) continue;
        code.start = (void *)start;
        code.length = end - start;
        break;
    }
    return code;
}

size_t davgate_release_code(void) {
    return release(davgate_find_code());
}
