#ifndef CAST_CSYSTEM_SHIM_H
#define CAST_CSYSTEM_SHIM_H
// The C library's calls that Swift's Glibc module does not declare (CastSystem). No library to link: libc's own.
#include <sys/socket.h>

/// accept4(2) with SOCK_CLOEXEC: accept4 is declared only under _GNU_SOURCE, which Swift's Glibc module lacks.
static inline int cast_accept_cloexec(int fd, struct sockaddr *address, socklen_t *length) {
#ifndef __USE_GNU
    extern int accept4(int, struct sockaddr *, socklen_t *, int);
#endif
    return accept4(fd, address, length, SOCK_CLOEXEC);
}
#endif
