#ifndef CAST_CSANDBOX_SHIM_H
#define CAST_CSANDBOX_SHIM_H
// The kernel interfaces of the decoder worker's sandbox (docs/decoder-worker.md, "The sandbox"): seccomp-bpf,
// namespaces, mounts and capabilities. Constants that are expressions (AUDIT_ARCH_*, offsetof) and the variadic
// calls (prctl, syscall) are wrapped here; the logic is Swift's.
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>
#include <string.h>
#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/sched.h>
#include <linux/seccomp.h>

/// AUDIT_ARCH_X86_64: the `arch` of struct seccomp_data for x86_64 system calls.
static inline uint32_t cast_sandbox_audit_arch_x86_64(void) { return AUDIT_ARCH_X86_64; }
/// AUDIT_ARCH_AARCH64.
static inline uint32_t cast_sandbox_audit_arch_aarch64(void) { return AUDIT_ARCH_AARCH64; }
/// offsetof(struct seccomp_data, nr).
static inline uint32_t cast_sandbox_offset_of_nr(void) { return offsetof(struct seccomp_data, nr); }
/// offsetof(struct seccomp_data, arch).
static inline uint32_t cast_sandbox_offset_of_arch(void) { return offsetof(struct seccomp_data, arch); }

/// prlimit64(2) on another process's RLIMIT_CPU (glibc declares prlimit only with _GNU_SOURCE): soft and hard in
/// seconds. 0 or -1 with errno.
static inline int cast_sandbox_set_cpu_limit(int pid, uint64_t soft) {
    uint64_t old[2];
    if (syscall(__NR_prlimit64, pid, 0 /* RLIMIT_CPU */, (void *)0, old) != 0) return -1;
    uint64_t limit[2] = {soft < old[1] ? soft : old[1], old[1]};
    return (int)syscall(__NR_prlimit64, pid, 0 /* RLIMIT_CPU */, limit, (void *)0);
}

/// prctl(2), which glibc declares variadic.
static inline int cast_sandbox_prctl(int option, unsigned long a2, unsigned long a3, unsigned long a4,
                                     unsigned long a5) {
    return prctl(option, a2, a3, a4, a5);
}

/// Installs a seccomp-bpf program. With `all_threads` 0, on the calling thread through prctl(PR_SET_SECCOMP), which
/// a process under systemd's `SystemCallFilter=@system-service` may call (seccomp(2) is not in that set and is
/// killed there); with 1, on every thread of the process (seccomp(2) with TSYNC). Returns 0, or -1 with errno
/// (EINVAL: no seccomp filters in this kernel), or with TSYNC the id of a thread that could not be synchronised.
static inline long cast_sandbox_install_filter(struct sock_filter *instructions, unsigned short count,
                                               int all_threads) {
    struct sock_fprog program = {.len = count, .filter = instructions};
    if (!all_threads) return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program, 0, 0);
    return syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &program);
}

/// unshare(2), which glibc hides behind _GNU_SOURCE.
static inline int cast_sandbox_unshare(int flags) { return (int)syscall(__NR_unshare, flags); }

/// mount(2).
static inline int cast_sandbox_mount(const char *source, const char *target, const char *type, unsigned long flags,
                                     const char *data) {
    return (int)syscall(__NR_mount, source, target, type, flags, data);
}

/// capset(2) with every set empty: the process keeps no capability (version 3: two 32-bit words per set).
static inline int cast_sandbox_clear_capabilities(void) {
    struct __user_cap_header_struct header = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct data[2] = {{0, 0, 0}, {0, 0, 0}};
    return (int)syscall(__NR_capset, &header, data);
}
/// pidfd_open(2) (Linux 5.3): a descriptor that becomes readable when the process `pid` exits, so that castd can wait
/// for a worker with a deadline (poll) instead of polling waitpid. -1 and errno on failure.
static inline int cast_sandbox_pidfd_open(int pid) { return (int)syscall(__NR_pidfd_open, pid, 0); }


/// Brings the loopback interface of the calling process's network namespace up (a new namespace has it down).
/// 0, or -1 with errno.
static inline int cast_sandbox_loopback_up(void) {
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    struct ifreq request;
    memset(&request, 0, sizeof request);
    strncpy(request.ifr_name, "lo", IFNAMSIZ - 1);
    int status = ioctl(fd, SIOCGIFFLAGS, &request);
    if (status == 0) {
        request.ifr_flags |= IFF_UP;
        status = ioctl(fd, SIOCSIFFLAGS, &request);
    }
    int saved = errno;
    close(fd);
    errno = saved;
    return status;
}

/// A TCP listener on 127.0.0.1 and a free port of the calling process's network namespace, close-on-exec; its port
/// in `*port`. The descriptor, or -1 with errno.
static inline int cast_sandbox_loopback_listener(uint16_t *port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    struct sockaddr_in address;
    memset(&address, 0, sizeof address);
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (bind(fd, (struct sockaddr *)&address, sizeof address) != 0 || listen(fd, 16) != 0
        || getsockname(fd, (struct sockaddr *)&address, &length) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    *port = ntohs(address.sin_port);
    return fd;
}

/// Sends one byte, `marker`, over the Unix socket `channel` with `fd` attached (SCM_RIGHTS), or with none when `fd`
/// is negative. 0, or -1 with errno.
static inline int cast_sandbox_send_descriptor(int channel, int fd, uint8_t marker) {
    char control[CMSG_SPACE(sizeof(int))];
    memset(control, 0, sizeof control);
    struct iovec data = {.iov_base = &marker, .iov_len = 1};
    struct msghdr message = {.msg_iov = &data, .msg_iovlen = 1};
    if (fd >= 0) {
        message.msg_control = control;
        message.msg_controllen = sizeof control;
        struct cmsghdr *header = CMSG_FIRSTHDR(&message);
        header->cmsg_level = SOL_SOCKET;
        header->cmsg_type = SCM_RIGHTS;
        header->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(header), &fd, sizeof(int));
    }
    ssize_t sent;
    do { sent = sendmsg(channel, &message, MSG_NOSIGNAL); } while (sent < 0 && errno == EINTR);
    return sent == 1 ? 0 : -1;
}

/// Receives the one byte `cast_sandbox_send_descriptor` sent, into `*marker`, and the descriptor attached to it into
/// `*fd` (close-on-exec; -1 when none came). 1 when a byte came, 0 at the end of the stream, -1 with errno (EAGAIN:
/// the socket's receive timeout passed). Any descriptors beyond the first are closed.
static inline int cast_sandbox_receive_descriptor(int channel, int *fd, uint8_t *marker) {
    char control[CMSG_SPACE(4 * sizeof(int))];
    struct iovec data = {.iov_base = marker, .iov_len = 1};
    struct msghdr message = {.msg_iov = &data, .msg_iovlen = 1, .msg_control = control,
                             .msg_controllen = sizeof control};
    *fd = -1;
    ssize_t received;
    do { received = recvmsg(channel, &message, MSG_CMSG_CLOEXEC); } while (received < 0 && errno == EINTR);
    if (received <= 0) return (int)received;
    for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header; header = CMSG_NXTHDR(&message, header)) {
        if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) continue;
        size_t count = (header->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t index = 0; index < count; index++) {
            int descriptor;
            memcpy(&descriptor, CMSG_DATA(header) + index * sizeof(int), sizeof(int));
            if (*fd < 0) *fd = descriptor; else close(descriptor);
        }
    }
    return 1;
}

#endif
