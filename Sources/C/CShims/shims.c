#define _GNU_SOURCE
#include "CShims.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

int rb_peer_credentials(int fd, pid_t *pid, uid_t *uid, gid_t *gid) {
    struct ucred cred;
    socklen_t len = sizeof(cred);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return -errno;
    if (pid) *pid = cred.pid;
    if (uid) *uid = cred.uid;
    if (gid) *gid = cred.gid;
    return 0;
}

int rb_peer_groups(int fd, gid_t *groups, int *count) {
#ifdef SO_PEERGROUPS
    socklen_t len = (socklen_t)(*count) * (socklen_t)sizeof(gid_t);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) != 0) {
        int err = errno;
        if (err == ERANGE) *count = (int)(len / sizeof(gid_t));
        return -err;
    }
    *count = (int)(len / sizeof(gid_t));
    return 0;
#else
    (void)fd; (void)groups; *count = 0;
    return -ENOPROTOOPT;
#endif
}

int rb_accept_nonblocking(int fd) {
    int client = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    return client >= 0 ? client : -errno;
}

int rb_wakeup_eventfd(void) {
    int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    return fd >= 0 ? fd : -errno;
}

int rb_set_thread_name(const char *name) {
    char buf[16];
    strncpy(buf, name, sizeof(buf) - 1);
    buf[sizeof(buf) - 1] = 0;
    return pthread_setname_np(pthread_self(), buf);
}

int rb_open_pty(char *path, size_t path_len) {
    int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (master < 0) return -errno;
    if (grantpt(master) != 0 || unlockpt(master) != 0 || ptsname_r(master, path, path_len) != 0) {
        int err = errno;
        close(master);
        return -err;
    }
    struct termios tio;
    if (tcgetattr(master, &tio) == 0) {
        cfmakeraw(&tio);
        tcsetattr(master, TCSANOW, &tio);
    }
    return master;
}
