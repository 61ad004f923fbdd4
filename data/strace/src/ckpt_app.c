/*
 * ckpt_app.c -- a tiny checkpointing "application" whose I/O pattern is known,
 * traced with strace to make iochar's strace fixtures (see ../capture.sh).
 *
 * Single-process mode (-w 0, the default), in this order:
 *   1. access(WORKDIR/ckpt.conf)  -> fails with ENOENT (an optional config file)
 *   2. stat(INPUT), open INPUT, read it ONCE in full with read() calls of
 *      READ_CHUNK bytes until read() returns 0 (EOF), close it   [required I/O]
 *   3. open WORKDIR/scratch.dat O_RDWR|O_CREAT|O_TRUNC once, ftruncate it to
 *      SCRATCH_BYTES; then ITERS times:                          [staging I/O]
 *        lseek(fd, 0, SEEK_SET); write() SCRATCH_BYTES in 2 blocks;
 *        lseek(fd, 0, SEEK_SET); readv() SCRATCH_BYTES with 2 iovecs;
 *        compute: busy loop of COMPUTE_MS milliseconds (no syscalls: the
 *        clock is read through the vDSO);
 *        when CKPT_S seconds have passed since the last checkpoint (or since
 *        the start), write a NEW checkpoint file WORKDIR/ckpt.NNN (NNN counts
 *        from 000): open O_WRONLY|O_CREAT|O_TRUNC, CKPT_BLOCKS write()s of
 *        CKPT_BLOCK bytes, fsync, close                          [checkpoint]
 *      then close scratch and unlink it.
 *   4. write WORKDIR/output.dat: a 2-iovec writev() header (16 + 48 bytes),
 *      then OUT_BLOCKS pwrite64() calls of OUT_BLOCK bytes at explicit
 *      offsets 64 + i*OUT_BLOCK, fdatasync, close              [final output]
 *   5. print "checkpoints=N iterations=M" on stdout.
 *
 * Worker mode (-w W, W >= 1):
 *   the parent reads INPUT once in full as above, makes a pipe and forks W
 *   workers. Worker i opens WORKDIR/worker.i.dat, writes ITERS blocks of
 *   WORKER_BLOCK bytes (sleeping 20 ms between writes so the workers run
 *   concurrently), fsyncs, closes, then writes one fixed-size 32-byte status
 *   line to the pipe and exits. The parent reads the pipe (blocking reads of
 *   32 bytes, so strace shows them as <unfinished ...> / <... read resumed>
 *   pairs), reaps the workers with waitpid, and writes output.dat as above.
 *
 * Build: gcc -O1 -o ckpt_app ckpt_app.c
 * Usage: ckpt_app [-i ITERS] [-c COMPUTE_MS] [-k CKPT_S] [-w WORKERS] INPUT WORKDIR
 *
 * Licence: BSD-3-Clause, same as iochar.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define READ_CHUNK 65536
#define SCRATCH_BYTES 65536
#define CKPT_BLOCK 16384
#define CKPT_BLOCKS 3
#define OUT_BLOCK 8192
#define OUT_BLOCKS 4
#define WORKER_BLOCK 4096
#define STATUS_LEN 32

static char buf[READ_CHUNK];

static void die(const char *what)
{
    perror(what);
    exit(1);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void busy_ms(int ms)
{
    double end = now_s() + ms / 1000.0;
    volatile unsigned long x = 0;
    while (now_s() < end)
        for (int i = 0; i < 1000; i++)
            x += i;
}

static void write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0)
            die("write");
        p += w;
        n -= (size_t)w;
    }
}

static long read_input(const char *input)
{
    struct stat st;
    if (stat(input, &st) != 0)
        die("stat input");
    int fd = open(input, O_RDONLY);
    if (fd < 0)
        die("open input");
    long total = 0;
    ssize_t r;
    while ((r = read(fd, buf, sizeof buf)) > 0)
        total += r;
    if (r < 0)
        die("read input");
    close(fd);
    if (total != st.st_size) {
        fprintf(stderr, "short input read\n");
        exit(1);
    }
    return total;
}

static void write_output(const char *workdir, long input_bytes, int nckpt)
{
    char path[4096], head[16], info[48];
    snprintf(path, sizeof path, "%s/output.dat", workdir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        die("open output");
    memset(head, ' ', sizeof head);
    memcpy(head, "CKPTAPP OUTPUT", 14);
    memset(info, ' ', sizeof info);
    int n = snprintf(info, sizeof info, "in=%ld ckpt=%d", input_bytes, nckpt);
    info[n] = ' ';
    struct iovec iov[2] = {{head, sizeof head}, {info, sizeof info}};
    if (writev(fd, iov, 2) != (ssize_t)(sizeof head + sizeof info))
        die("writev");
    memset(buf, 'o', OUT_BLOCK);
    for (int i = 0; i < OUT_BLOCKS; i++)
        if (pwrite(fd, buf, OUT_BLOCK, 64 + (off_t)i * OUT_BLOCK) != OUT_BLOCK)
            die("pwrite");
    fdatasync(fd);
    close(fd);
}

static int run_single(const char *input, const char *workdir, int iters, int compute_ms,
                      int ckpt_s)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/ckpt.conf", workdir);
    if (access(path, R_OK) == 0)
        fprintf(stderr, "note: %s is ignored\n", path);
    long in_bytes = read_input(input);

    snprintf(path, sizeof path, "%s/scratch.dat", workdir);
    int sfd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (sfd < 0)
        die("open scratch");
    if (ftruncate(sfd, SCRATCH_BYTES) != 0)
        die("ftruncate");
    memset(buf, 's', SCRATCH_BYTES);

    int nckpt = 0;
    double last = now_s();
    for (int it = 0; it < iters; it++) {
        lseek(sfd, 0, SEEK_SET);
        write_all(sfd, buf, SCRATCH_BYTES / 2);
        write_all(sfd, buf + SCRATCH_BYTES / 2, SCRATCH_BYTES / 2);
        lseek(sfd, 0, SEEK_SET);
        struct iovec iov[2] = {{buf, SCRATCH_BYTES / 2}, {buf + SCRATCH_BYTES / 2, SCRATCH_BYTES / 2}};
        if (readv(sfd, iov, 2) != SCRATCH_BYTES)
            die("readv");
        busy_ms(compute_ms);
        if (now_s() - last >= ckpt_s) {
            char cp[4096];
            snprintf(cp, sizeof cp, "%s/ckpt.%03d", workdir, nckpt);
            int cfd = open(cp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (cfd < 0)
                die("open ckpt");
            memset(buf, 'c', CKPT_BLOCK);
            for (int b = 0; b < CKPT_BLOCKS; b++)
                write_all(cfd, buf, CKPT_BLOCK);
            fsync(cfd);
            close(cfd);
            memset(buf, 's', SCRATCH_BYTES);
            nckpt++;
            last = now_s();
        }
    }
    close(sfd);
    unlink(path);
    write_output(workdir, in_bytes, nckpt);
    printf("checkpoints=%d iterations=%d\n", nckpt, iters);
    return 0;
}

static int run_workers(const char *input, const char *workdir, int iters, int nworkers)
{
    long in_bytes = read_input(input);
    int pfd[2];
    if (pipe(pfd) != 0)
        die("pipe");
    for (int w = 0; w < nworkers; w++) {
        pid_t pid = fork();
        if (pid < 0)
            die("fork");
        if (pid == 0) {
            close(pfd[0]);
            char path[4096], status[64];
            snprintf(path, sizeof path, "%s/worker.%d.dat", workdir, w);
            int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (fd < 0)
                die("open worker file");
            memset(buf, 'a' + w, WORKER_BLOCK);
            struct timespec nap = {0, 20 * 1000 * 1000};
            for (int i = 0; i < iters; i++) {
                write_all(fd, buf, WORKER_BLOCK);
                nanosleep(&nap, NULL);
            }
            fsync(fd);
            close(fd);
            snprintf(status, sizeof status, "worker %d wrote %010ld", w,
                     (long)iters * WORKER_BLOCK);
            size_t len = strlen(status);
            if (len < STATUS_LEN)
                memset(status + len, ' ', STATUS_LEN - len);
            status[STATUS_LEN - 1] = '\n';
            write_all(pfd[1], status, STATUS_LEN);
            _exit(0);
        }
    }
    close(pfd[1]);
    char msg[STATUS_LEN];
    int got = 0;
    ssize_t r;
    while ((r = read(pfd[0], msg, sizeof msg)) > 0)
        got += (int)r / STATUS_LEN;
    close(pfd[0]);
    for (int w = 0; w < nworkers; w++)
        waitpid(-1, NULL, 0);
    write_output(workdir, in_bytes, got);
    printf("workers=%d statuses=%d\n", nworkers, got);
    return 0;
}

int main(int argc, char **argv)
{
    int iters = 40, compute_ms = 300, ckpt_s = 2, nworkers = 0, opt;
    while ((opt = getopt(argc, argv, "i:c:k:w:")) != -1) {
        switch (opt) {
        case 'i': iters = atoi(optarg); break;
        case 'c': compute_ms = atoi(optarg); break;
        case 'k': ckpt_s = atoi(optarg); break;
        case 'w': nworkers = atoi(optarg); break;
        default:
            fprintf(stderr, "usage: %s [-i ITERS] [-c COMPUTE_MS] [-k CKPT_S] [-w WORKERS] INPUT WORKDIR\n",
                    argv[0]);
            return 2;
        }
    }
    if (argc - optind != 2) {
        fprintf(stderr, "usage: %s [-i ITERS] [-c COMPUTE_MS] [-k CKPT_S] [-w WORKERS] INPUT WORKDIR\n",
                argv[0]);
        return 2;
    }
    if (nworkers > 0)
        return run_workers(argv[optind], argv[optind + 1], iters, nworkers);
    return run_single(argv[optind], argv[optind + 1], iters, compute_ms, ckpt_s);
}
