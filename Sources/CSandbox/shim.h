#ifndef CAST_CSANDBOX_SHIM_H
#define CAST_CSANDBOX_SHIM_H
// The kernel interfaces of the decoder worker's sandbox (docs/decoder-worker.md, "The sandbox"): seccomp-bpf,
// namespaces, mounts and capabilities. Constants that are expressions (AUDIT_ARCH_*, offsetof) and the variadic
// calls (prctl, syscall) are wrapped here; the logic is Swift's.
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>
#include <sys/prctl.h>
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

#endif
