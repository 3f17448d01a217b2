// Small C helpers for things Swift's Glibc module cannot reach (it is built without _GNU_SOURCE).
#ifndef ROOMBRIDGE_CSHIMS_H
#define ROOMBRIDGE_CSHIMS_H

#include <stdint.h>
#include <sys/types.h>

/// Credentials of the peer of a connected Unix socket (SO_PEERCRED). Returns 0 or -errno.
int rb_peer_credentials(int fd, pid_t *pid, uid_t *uid, gid_t *gid);

/// Supplementary groups of the peer (SO_PEERGROUPS, Linux >= 4.13).
/// On entry *count is the capacity of groups; on success it holds the number written.
/// Returns 0, or -errno (-ERANGE: capacity too small, *count holds the size needed).
int rb_peer_groups(int fd, gid_t *groups, int *count);

/// accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK). Returns the new fd, or -errno.
int rb_accept_nonblocking(int fd);

/// An eventfd (close-on-exec, non-blocking) to wake a thread blocked in poll. Returns it, or -errno.
int rb_wakeup_eventfd(void);

/// Names the calling thread (visible in top/ps; max 15 chars). Returns 0 or an errno.
int rb_set_thread_name(const char *name);

/// Creates a pseudo-terminal pair in raw mode. Returns the master fd (>= 0) or -errno;
/// the slave's path is written into path (capacity path_len).
int rb_open_pty(char *path, size_t path_len);

#endif
