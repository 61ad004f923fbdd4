/* patterns: the I/O patterns of iochar issue 17 item 6, for strace.
 *
 * Usage: patterns run DIR | patterns restart DIR | patterns threads DIR
 *
 * run      reads DIR/input.dat at the start and again in the middle of the run
 *          (an input read twice); every iteration (100 ms apart) appends a log
 *          line to run.log (O_APPEND), writes the next piece of stream.dat
 *          (output streamed over the run, each byte once), writes to /dev/null,
 *          reads /proc/self/stat and a /sys file, moves a few bytes through a
 *          pipe, a socketpair and an eventfd; every 3 iterations rewrites the
 *          state to state.ckpt (O_TRUNC, fsync): 3 rewrites; writes map.dat's
 *          header with write() and its body through a shared mmap; then spends
 *          the last part of the run writing final.dat (5 pieces, 120 ms apart).
 * restart  reads state.ckpt back (the restart), then runs 6 iterations
 *          rewriting state.ckpt every 3 (2 rewrites) and writes final.dat.
 * threads  4 threads for a few milliseconds: each writes its share of
 *          shared.dat (pwrite, distinct offsets) and rewrites its own status
 *          file thr.N 8 times, 2 ms apart (a "period" at scheduling scale).
 *
 * BSD-3-Clause, part of iochar.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define STATE_BYTES (48 * 1024)
#define PIECE 4096
static char buf[STATE_BYTES];
static const char *dir;

static void die(const char *what) { perror(what); exit(1); }

static void nap(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

static int at(const char *name, int flags) {
    int fd = openat(AT_FDCWD, name, flags, 0644);
    if (fd < 0) die(name);
    return fd;
}

static void write_all(int fd, const char *p, size_t n) {
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0) die("write");
        p += k, n -= (size_t)k;
    }
}

static void read_whole(const char *name) {
    int fd = at(name, O_RDONLY);
    while (read(fd, buf, sizeof buf) > 0) {}
    close(fd);
}

static void save_state(void) {  /* one checkpoint: the whole state, over the old one */
    int fd = at("state.ckpt", O_WRONLY | O_CREAT | O_TRUNC);
    for (int i = 0; i < STATE_BYTES; i += 16384) write_all(fd, buf + i, 16384);
    fsync(fd);
    close(fd);
}

static void not_files(int pfd[2], int sv[2], int efd) {
    int fd = at("/dev/null", O_WRONLY);
    write_all(fd, buf, 64);
    close(fd);
    fd = at("/proc/self/stat", O_RDONLY);
    if (read(fd, buf, 512) < 0) die("read /proc");
    close(fd);
    fd = open("/sys/devices/system/cpu/online", O_RDONLY);
    if (fd >= 0) { if (read(fd, buf, 64) < 0) die("read /sys"); close(fd); }
    write_all(pfd[1], "ping", 4);
    if (read(pfd[0], buf, 4) != 4) die("pipe");
    write_all(sv[0], "pong", 4);
    if (read(sv[1], buf, 4) != 4) die("socketpair");
    eventfd_t v;
    eventfd_write(efd, 1);
    eventfd_read(efd, &v);
}

static void final_output(void) {  /* the last part of the run: output, each byte once */
    int fd = at("final.dat", O_WRONLY | O_CREAT | O_TRUNC);
    for (int i = 0; i < 5; i++) {
        write_all(fd, buf, PIECE);
        nap(120);
    }
    close(fd);
}

static void mapped_file(void) {  /* header by write(), body through the mapping */
    int fd = at("map.dat", O_RDWR | O_CREAT | O_TRUNC);
    write_all(fd, "MAPv1\n", 6);
    if (ftruncate(fd, 65536) != 0) die("ftruncate");
    char *m = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) die("mmap");
    memset(m + 4096, 'm', 65536 - 4096);
    msync(m, 65536, MS_SYNC);
    munmap(m, 65536);
    close(fd);
}

static int run(int iters, int restart) {
    int pfd[2], sv[2];
    if (pipe(pfd) != 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) die("pipe");
    int efd = eventfd(0, 0);
    if (efd < 0) die("eventfd");
    if (restart) read_whole("state.ckpt");
    else read_whole("input.dat");
    int stream = restart ? -1 : at("stream.dat", O_WRONLY | O_CREAT | O_TRUNC);
    for (int i = 1; i <= iters; i++) {
        nap(100);  /* computation */
        if (!restart) {
            if (i == iters / 2) read_whole("input.dat");  /* the input once more */
            int log = at("run.log", O_WRONLY | O_CREAT | O_APPEND);
            int n = snprintf(buf, 64, "iteration %d done\n", i);
            write_all(log, buf, (size_t)n);
            close(log);
            write_all(stream, buf, PIECE);
            not_files(pfd, sv, efd);
        }
        if (i % 3 == 0) save_state();
    }
    if (stream >= 0) close(stream);
    if (!restart) mapped_file();
    final_output();
    return 0;
}

static void *worker(void *arg) {
    long id = (long)arg;
    char name[16];
    snprintf(name, sizeof name, "thr.%ld", id);
    int shared = at("shared.dat", O_WRONLY | O_CREAT);
    int own = at(name, O_WRONLY | O_CREAT | O_TRUNC);
    for (int k = 0; k < 8; k++) {
        if (pwrite(shared, buf, 1024, (id * 8 + k) * 1024) != 1024) die("pwrite");
        if (pwrite(own, buf, 512, 0) != 512) die("pwrite");  /* the same status again */
        nap(2);
    }
    close(own);
    close(shared);
    return NULL;
}

static int threads(void) {
    pthread_t t[4];
    for (long i = 0; i < 4; i++) pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: patterns run|restart|threads DIR\n"); return 2; }
    dir = argv[2];
    if (chdir(dir) != 0) die(dir);
    memset(buf, 's', sizeof buf);
    if (!strcmp(argv[1], "run")) return run(9, 0);
    if (!strcmp(argv[1], "restart")) return run(6, 1);
    if (!strcmp(argv[1], "threads")) return threads();
    fprintf(stderr, "unknown mode %s\n", argv[1]);
    return 2;
}
