"""What each system call means to the strace loader: its op, argument shape and effects.

:data:`CALL_OPS` (re-exported by :mod:`iochar.load.strace`) maps a call to its
``ops.op`` and :data:`TRANSFER_OPS` a transfer call to the ops of its two rows;
the other tables say where a call names its file (first fd, path
argument, ``(dirfd, path)``, mmap's fifth argument), how it moves the file
position of its fd, and which calls open, duplicate, close or clobber an fd.
:meth:`iochar.load.strace._parser._Parser._gid` reads them once per call name.
"""

from __future__ import annotations

#: Raw syscall name -> ``ops.op`` for the calls with a specific op.
CALL_OPS: dict[str, str] = {
    **dict.fromkeys(("read", "pread64", "pread", "readv", "preadv", "preadv2"), "read"),
    **dict.fromkeys(("write", "pwrite64", "pwrite", "writev", "pwritev", "pwritev2"), "write"),
    **dict.fromkeys(("open", "openat", "openat2", "creat"), "open"),
    "close": "close",
    **dict.fromkeys(("lseek", "_llseek"), "seek"),
    **dict.fromkeys(("fsync", "fdatasync", "sync_file_range", "sync_file_range2"), "sync"),
    **dict.fromkeys(
        (
            "stat", "lstat", "fstat", "stat64", "lstat64", "fstat64", "oldstat", "oldlstat",
            "oldfstat", "newfstatat", "fstatat64", "statx", "access", "faccessat", "faccessat2",
        ),
        "stat",
    ),
}  # fmt: skip

# Argument shapes, by call name (how to find the call's file).
_FD_FIRST = 1  # first argument is a file descriptor
_PATH_FIRST = 2  # first argument is a path string
_AT_PATH = 3  # (dirfd, path, ...)
_MMAP = 4  # fd is the fifth argument

_FD_FIRST_CALLS = (
    "read", "pread64", "pread", "readv", "preadv", "preadv2", "write", "pwrite64", "pwrite",
    "writev", "pwritev", "pwritev2", "close", "lseek", "_llseek", "fsync", "fdatasync",
    "sync_file_range", "sync_file_range2", "fstat", "fstat64", "oldfstat", "ftruncate",
    "ftruncate64", "fallocate", "getdents", "getdents64", "readdir", "fcntl", "fcntl64", "flock",
    "fadvise64", "fadvise64_64", "readahead", "fstatfs", "fstatfs64", "fchmod", "fchown",
    "fchown32", "fchdir", "syncfs", "fgetxattr", "fsetxattr", "flistxattr", "fremovexattr",
    "ioctl", "dup", "dup2", "dup3", "sendfile", "sendfile64", "copy_file_range", "splice", "tee",
)  # fmt: skip
_PATH_FIRST_CALLS = (
    "open", "creat", "stat", "lstat", "stat64", "lstat64", "oldstat", "oldlstat", "access",
    "truncate", "truncate64", "unlink", "rmdir", "mkdir", "rename", "link", "symlink",
    "symlinkat", "readlink", "chdir", "chroot", "chmod", "chown", "chown32", "lchown",
    "lchown32", "utime", "utimes", "execve", "statfs", "statfs64", "getxattr", "lgetxattr",
    "setxattr", "lsetxattr", "listxattr", "llistxattr", "removexattr", "lremovexattr", "mknod",
    "acct", "swapon", "swapoff", "uselib",
)  # fmt: skip
_AT_CALLS = (
    "openat", "openat2", "newfstatat", "fstatat64", "statx", "faccessat", "faccessat2",
    "unlinkat", "mkdirat", "renameat", "renameat2", "linkat", "readlinkat", "fchmodat",
    "fchmodat2", "fchownat", "utimensat", "futimesat", "mknodat", "execveat",
    "name_to_handle_at",
)  # fmt: skip
_SHAPES: dict[str, int] = {
    **dict.fromkeys(_FD_FIRST_CALLS, _FD_FIRST),
    **dict.fromkeys(_PATH_FIRST_CALLS, _PATH_FIRST),
    **dict.fromkeys(_AT_CALLS, _AT_PATH),
    "mmap": _MMAP,
    "mmap2": _MMAP,
}

# How a call moves the (pid, fd) file position.
_POS_NONE, _POS_ADVANCE, _POS_EXPLICIT, _POS_EXPLICIT2, _POS_SEEK, _POS_LLSEEK = range(6)
_POSITION: dict[str, int] = {
    **dict.fromkeys(("read", "write", "readv", "writev"), _POS_ADVANCE),
    **dict.fromkeys(("pread64", "pread", "pwrite64", "pwrite", "preadv", "pwritev"), _POS_EXPLICIT),
    **dict.fromkeys(("preadv2", "pwritev2"), _POS_EXPLICIT2),  # offset -1: current position
    "lseek": _POS_SEEK,
    "_llseek": _POS_LLSEEK,
}
_POS_PTR = 6  # a transfer side with an offset pointer: pread-like, the fd position stays
# Calls that reset what is known about an fd (position, and its file without -y).
_OPEN_CALLS = ("open", "openat", "openat2", "creat")
_DUP_CALLS = ("dup", "dup2", "dup3")
# Transfers whose arguments do not parse leave their first fd's position unknown.
_CLOBBER_CALLS = ("sendfile", "sendfile64", "copy_file_range", "splice", "tee")

# Calls with two sides, each its own ops row (argument order), by argument layout:
# - a transfer between two fds: a read on the in-fd's file and a write on the out-fd's,
#   both of the returned byte count (man 2 copy_file_range, sendfile, splice, tee);
# - a call naming two paths (rename, link): one row per path, old then new.
_XFER_PTR2 = 1  # (fd_in, loff_t *off_in, fd_out, loff_t *off_out, len, flags)
_XFER_SENDFILE = 2  # (out_fd, in_fd, off_t *offset, count)
_XFER_TEE = 3  # (fd_in, fd_out, len, flags): two pipes
_PATHS2 = 4  # (oldpath, newpath)
_AT_PATHS2 = 5  # (olddirfd, oldpath, newdirfd, newpath[, flags])
_TWO_SIDED: dict[str, int] = {
    **dict.fromkeys(("copy_file_range", "splice"), _XFER_PTR2),
    **dict.fromkeys(("sendfile", "sendfile64"), _XFER_SENDFILE),
    "tee": _XFER_TEE,
    **dict.fromkeys(("rename", "link"), _PATHS2),
    **dict.fromkeys(("renameat", "renameat2", "linkat"), _AT_PATHS2),
}
#: Transfer call -> ``ops.op`` of its (first, second) fd argument's row.
TRANSFER_OPS: dict[str, tuple[str, str]] = {
    name: ("write", "read") if layout == _XFER_SENDFILE else ("read", "write")
    for name, layout in _TWO_SIDED.items()
    if layout in (_XFER_PTR2, _XFER_SENDFILE, _XFER_TEE)
}
_EXEC_CALLS = ("execve", "execveat")
# Calls that never name a file or fd: their arguments are not searched.
_NO_FILE_CALLS = frozenset(
    (
        "brk", "mprotect", "munmap", "mremap", "madvise", "futex", "futex_waitv",
        "clock_nanosleep", "nanosleep", "clock_gettime", "clock_getres", "gettimeofday",
        "time", "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigsuspend", "sigaltstack",
        "set_robust_list", "get_robust_list", "set_tid_address", "arch_prctl", "rseq", "exit",
        "exit_group", "wait4", "waitid", "clone", "clone3", "fork", "vfork", "getpid", "getppid",
        "gettid", "getuid", "geteuid", "getgid", "getegid", "getresuid", "getresgid", "getgroups",
        "getrandom", "prlimit64", "getrlimit", "setrlimit", "getrusage", "sched_yield",
        "sched_getaffinity", "sched_setaffinity", "sched_getparam", "sched_setscheduler",
        "sched_getscheduler", "uname", "sysinfo", "umask", "kill", "tgkill", "tkill", "alarm",
        "setitimer", "getitimer", "times", "membarrier", "mlock", "munlock", "restart_syscall",
        "setpgid", "getpgid", "getpgrp", "setsid", "getsid", "prctl", "capget", "capset",
        "set_mempolicy", "get_mempolicy", "mbind", "pause",
    )
)  # fmt: skip
# Calls whose arguments beyond the first fd are read (so their text is kept).
_ARG_CALLS = frozenset(
    (*_PATH_FIRST_CALLS, *_AT_CALLS, *_TWO_SIDED, "mmap", "mmap2", "fcntl", "fcntl64", "_llseek")
    + tuple(k for k, v in _POSITION.items() if v in (_POS_EXPLICIT, _POS_EXPLICIT2))
)


# name flags (what a call does to its fd, whether its arguments are read, two sides)
_F_OPEN, _F_DUP, _F_FCNTL, _F_CLOSE, _F_CLOBBER, _F_ARGS, _F_EXEC, _F_TWO = (
    1 << i for i in range(8)
)
