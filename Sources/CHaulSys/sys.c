#define _GNU_SOURCE
#include "CHaulSys.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#if defined(__linux__) || defined(__APPLE__)
#include <sys/xattr.h>
#endif
#include <sys/socket.h>
#include <signal.h>
#include <spawn.h>
#include <pthread.h>
#ifdef __linux__
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <linux/fs.h>
#include <sys/vfs.h>
#endif

int haul_rename_noreplace(int olddirfd, const char *oldpath, int newdirfd, const char *newpath) {
#if defined(__linux__) && defined(SYS_renameat2)
    long rc = syscall(SYS_renameat2, olddirfd, oldpath, newdirfd, newpath, RENAME_NOREPLACE);
    if (rc == 0) return 0;
    if (errno != ENOSYS && errno != EINVAL) return -1;
#endif
    if (linkat(olddirfd, oldpath, newdirfd, newpath, 0) != 0) return -1;
    return unlinkat(olddirfd, oldpath, 0);
}

int haul_wakeup_open(int *readfd, int *writefd) {
#ifdef __linux__
    int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (fd < 0) return -1;
    *readfd = fd;
    *writefd = fd;
    return 0;
#else
    int fds[2];
    if (pipe(fds) != 0) return -1;
    fcntl(fds[0], F_SETFL, O_NONBLOCK);
    fcntl(fds[1], F_SETFL, O_NONBLOCK);
    fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    *readfd = fds[0];
    *writefd = fds[1];
    return 0;
#endif
}

void haul_wakeup_signal(int writefd) {
#ifdef __linux__
    uint64_t one = 1;
    ssize_t r = write(writefd, &one, sizeof one);
#else
    char one = 1;
    ssize_t r = write(writefd, &one, 1);
#endif
    (void)r;
}

void haul_start_writeback(int fd, int64_t offset, int64_t length) {
#ifdef __linux__
    (void)sync_file_range(fd, (off_t)offset, (off_t)length, SYNC_FILE_RANGE_WRITE);
#else
    (void)fd; (void)offset; (void)length;
#endif
}

int haul_syncfs(int fd) {
#ifdef __linux__
    return syncfs(fd);
#else
    (void)fd;
    errno = ENOSYS;
    return -1;
#endif
}

int haul_check_written(int fd) {
#ifdef __linux__
    return sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
#else
    (void)fd;
    errno = ENOSYS;
    return -1;
#endif
}

int haul_open_direct(int dirfd, const char *name) {
#ifdef __linux__
    return openat(dirfd, name, O_RDWR | O_DIRECT | O_NOFOLLOW | O_CLOEXEC);
#else
    (void)dirfd; (void)name;
    errno = ENOTSUP;
    return -1;
#endif
}

int haul_reserve(int fd, int64_t length) {
#ifdef __linux__
    while (fallocate(fd, 0, 0, (off_t)length) != 0) {
        if (errno != EINTR) return errno;
    }
    return 0;
#else
    (void)fd; (void)length;
    return ENOTSUP;
#endif
}

unsigned long haul_file_system_type(int fd) {
#ifdef __linux__
    struct statfs info;
    if (fstatfs(fd, &info) != 0) return 0;
    return (unsigned long)info.f_type;
#else
    (void)fd;
    return 0;
#endif
}

void haul_advise_sequential(int fd) {
#ifdef POSIX_FADV_SEQUENTIAL
    (void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#else
    (void)fd;
#endif
}

void haul_block_sigpipe_in_thread(void) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    (void)pthread_sigmask(SIG_BLOCK, &set, NULL);
}

void haul_set_thread_name(const char *name) {
#if defined(__linux__)
    char shortened[16];
    snprintf(shortened, sizeof shortened, "%s", name);
    (void)pthread_setname_np(pthread_self(), shortened);
#elif defined(__APPLE__)
    (void)pthread_setname_np(name);
#else
    (void)name;
#endif
}

int haul_o_nofollow(void) { return O_NOFOLLOW; }
int haul_o_directory(void) { return O_DIRECTORY; }
int haul_o_cloexec(void) { return O_CLOEXEC; }

int haul_thread_background(int background) {
#if defined(__linux__) && defined(SCHED_IDLE)
    struct sched_param param = { .sched_priority = 0 };
    return sched_setscheduler(0, background ? SCHED_IDLE : SCHED_OTHER, &param);   // 0: this thread
#elif defined(__APPLE__)
    int rc = pthread_set_qos_class_self_np(background ? QOS_CLASS_UTILITY : QOS_CLASS_DEFAULT, 0);
    if (rc != 0) { errno = rc; return -1; }
    return 0;
#else
    (void)background;
    errno = ENOSYS;
    return -1;
#endif
}

int haul_set_attribute(int fd, const char *name, const void *value, size_t size) {
#if defined(__APPLE__)
    return fsetxattr(fd, name, value, size, 0, 0);
#elif defined(__linux__)
    return fsetxattr(fd, name, value, size, 0);
#else
    (void)fd; (void)name; (void)value; (void)size;
    errno = ENOTSUP;
    return -1;
#endif
}

long haul_get_attribute(int fd, const char *name, void *buffer, size_t size) {
#if defined(__APPLE__)
    return (long)fgetxattr(fd, name, buffer, size, 0, 0);
#elif defined(__linux__)
    return (long)fgetxattr(fd, name, buffer, size);
#else
    (void)fd; (void)name; (void)buffer; (void)size;
    errno = ENOTSUP;
    return -1;
#endif
}

// Closes every descriptor from `lowest` up in a child posix_spawn starts (glibc 2.34 and later):
// a program the daemon runs gets none of its sockets, whatever a thread opens meanwhile. 0 when
// added; ENOSYS where the C library has no such action.
int haul_spawn_close_from(void *actions, int lowest) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    return posix_spawn_file_actions_addclosefrom_np((posix_spawn_file_actions_t *)actions, lowest);
#else
    (void)actions;
    (void)lowest;
    return ENOSYS;
#endif
}

int haul_bytes_contain(const void *haystack, size_t length, const void *needle, size_t needle_length) {
    return memmem(haystack, length, needle, needle_length) != NULL;
}
