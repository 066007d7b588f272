// Linux system calls and constants that the Glibc module does not expose to Swift, and the facts
// of the build (its commit, the Swift compiler's version).
#ifndef CHAUL_SYS_H
#define CHAUL_SYS_H

#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>

/// renameat2(RENAME_NOREPLACE) where available (Linux); EEXIST when the target exists.
/// Falls back to link()+unlink() semantics (also no-replace) on systems without renameat2.
int haul_rename_noreplace(int olddirfd, const char *oldpath, int newdirfd, const char *newpath);

/// An eventfd (Linux) or a pipe elsewhere, used to wake a thread blocked in poll().
/// On success stores the fd to poll in *readfd and the fd to signal in *writefd.
int haul_wakeup_open(int *readfd, int *writefd);
/// Signals the wake-up fd (idempotent while unread).
void haul_wakeup_signal(int writefd);

/// Starts writing back the dirty pages of [offset, offset+length) without waiting for it
/// (sync_file_range(SYNC_FILE_RANGE_WRITE) on Linux; nothing elsewhere), so the final fsync
/// finds little left to do.
void haul_start_writeback(int fd, int64_t offset, int64_t length);

/// Linux: syncfs(2), every dirty byte and inode of the file system holding `fd` is written and
/// the device cache flushed; 0 or -1 with errno. Elsewhere -1 with errno ENOSYS.
int haul_syncfs(int fd);

/// Linux: waits for any writeback of `fd`'s data and returns 0, or -1 with the errno of a
/// writeback error of this file not reported to this descriptor yet (sync_file_range with
/// WAIT_BEFORE | WRITE | WAIT_AFTER, which flushes no device cache). Elsewhere -1, ENOSYS.
int haul_check_written(int fd);

/// Linux: opens `name` in the folder `dirfd` for reading and writing with O_DIRECT (the page
/// cache bypassed), never through a symlink, close-on-exec; the descriptor, or -1 with errno.
/// Elsewhere -1 with errno ENOTSUP.
int haul_open_direct(int dirfd, const char *name);

/// Linux: reserves the blocks of [0, length) with fallocate(2) (mode 0: the file grows to
/// `length` if shorter); 0, or the errno (EOPNOTSUPP where the file system cannot reserve:
/// no byte-by-byte fallback as posix_fallocate has). Elsewhere ENOTSUP.
int haul_reserve(int fd, int64_t length);

/// Linux: the f_type of fstatfs(fd) (the file system's magic number), or 0 when unknown.
/// Elsewhere 0.
unsigned long haul_file_system_type(int fd);

/// posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL); ignored where unsupported.
void haul_advise_sequential(int fd);

/// Puts the calling thread in the background class (`background` != 0: SCHED_IDLE on Linux, the
/// utility QoS class on Apple systems), where it only gets CPU time no other thread wants; 0
/// asks for the normal class back, which on Linux needs CAP_SYS_NICE or a raised RLIMIT_NICE
/// (so a thread put in the background should end rather than be reused). Returns 0 on success,
/// -1 otherwise (errno set). For work that may lag behind, such as hashing written bytes.
int haul_thread_background(int background);

/// Blocks SIGPIPE in the calling thread, so a write to a closed socket (OpenSSL writes with
/// write(2), which cannot pass MSG_NOSIGNAL) fails with EPIPE instead of killing the process.
void haul_block_sigpipe_in_thread(void);

/// Names the calling thread (shown by `top -H`, `ps -L`, gdb and crash reports); Linux keeps
/// the first 15 bytes. Ignored where threads cannot be named.
void haul_set_thread_name(const char *name);

/// Continues a CRC-32C (Castagnoli, as in iSCSI and ext4) over `length` bytes: pass 0 to start.
/// Uses the CPU's CRC instructions where present (SSE4.2, ARMv8 CRC; on x86-64 with PCLMULQDQ,
/// three interleaved chains joined by carry-less multiplication), a table otherwise.
uint32_t haul_crc32c(uint32_t crc, const void *data, size_t length);

/// Sets the extended attribute `name` of the open file `fd` to `size` bytes of `value`
/// (fsetxattr; Apple's takes a position and options as well). 0, or -1 with errno (ENOTSUP
/// where the file system keeps no extended attributes).
int haul_set_attribute(int fd, const char *name, const void *value, size_t size);
/// Reads the extended attribute `name` of the open file `fd` into `buffer` (fgetxattr): its
/// length, or -1 with errno (ENODATA/ENOATTR when it is not there, ERANGE when it is longer).
long haul_get_attribute(int fd, const char *name, void *buffer, size_t size);

/// The O_NOFOLLOW | O_CLOEXEC and O_DIRECTORY flag values.
int haul_o_nofollow(void);
int haul_o_directory(void);
int haul_o_cloexec(void);

/// The commit the program was built from, as the build passed it (HAUL_COMMIT in the
/// environment of `swift build`, which Package.swift hands to this file), or NULL when the
/// build did not say.
const char *haul_build_commit(void);

/// Adds to posix_spawn's file actions (a posix_spawn_file_actions_t *) the closing of every
/// descriptor from `lowest` up; 0, or ENOSYS where the C library cannot.
int haul_spawn_close_from(void *actions, int lowest);

/// Whether `needle` (`needle_length` bytes, at least 1) occurs in `haystack`: memmem(3), which
/// Swift's Glibc module leaves out (a GNU extension).
int haul_bytes_contain(const void *haystack, size_t length, const void *needle, size_t needle_length);

/// The version of the Swift compiler that imports this header, as major * 10000 + minor * 100 +
/// patch (60301 for 6.3.1): Swift's importer defines __swift__ so; 0 for a C compiler.
static inline int haul_swift_compiler_version(void) {
#ifdef __swift__
    return __swift__;
#else
    return 0;
#endif
}

#endif
