/* ooc_app: an iterative program whose data set does or does not fit in memory,
 * for strace (iochar issue 19: staging I/O, Miller & Katz 1991 section 5.1).
 *
 * Usage: ooc_app ooc DIR | ooc_app incore DIR
 *
 * Both modes read DIR/input.dat (1 MiB) once at the start, run 6 iterations over
 * a data set of two arrays, A (20 MiB, iterations 1-4) and B (12 MiB, created in
 * iteration 3, iterations 3-6), and write output.dat (1 MiB) at the end.
 *
 * ooc     keeps one 1 MiB block in memory: A and B live in the scratch files
 *         scratch_a.dat and scratch_b.dat. Each file is first written whole
 *         (pwrite of every block), then every iteration that uses it reads each
 *         block (pread), computes on it and writes it back in place (pwrite): the
 *         data set is shuttled in and out of memory once per iteration (staging
 *         I/O). scratch_a.dat is closed and unlinked after iteration 4,
 *         scratch_b.dat at the end. Both are live during iterations 3 and 4:
 *         32 MiB of staging data at once.
 * incore  holds A and B in memory (malloc): the same computation, no scratch file.
 *
 * Computation: COMPUTE_MS of busy work per block and iteration (no syscalls).
 *
 * BSD-3-Clause, part of iochar.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BLOCK (1024 * 1024)
#define A_BLOCKS 20
#define B_BLOCKS 12
#define ITERS 6
#define COMPUTE_MS 4

static void die(const char *what) { perror(what); exit(1); }

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void compute(unsigned char *p, size_t n) {
    double end = now() + COMPUTE_MS * 1e-3;
    unsigned x = 1;
    do {
        for (size_t i = 0; i < n; i += 4096) x = x * 1103515245u + p[i];
    } while (now() < end);
    p[0] = (unsigned char)x;
}

static void pread_all(int fd, unsigned char *p, size_t n, off_t off) {
    while (n) {
        ssize_t k = pread(fd, p, n, off);
        if (k <= 0) die("pread");
        p += k, n -= (size_t)k, off += k;
    }
}

static void pwrite_all(int fd, const unsigned char *p, size_t n, off_t off) {
    while (n) {
        ssize_t k = pwrite(fd, p, n, off);
        if (k <= 0) die("pwrite");
        p += k, n -= (size_t)k, off += k;
    }
}

/* one pass over an out-of-core array: read, compute, write back each block */
static void pass_file(int fd, int blocks, unsigned char *buf) {
    for (int k = 0; k < blocks; k++) {
        pread_all(fd, buf, BLOCK, (off_t)k * BLOCK);
        compute(buf, BLOCK);
        pwrite_all(fd, buf, BLOCK, (off_t)k * BLOCK);
    }
}

static void pass_mem(unsigned char *a, int blocks) {
    for (int k = 0; k < blocks; k++) compute(a + (size_t)k * BLOCK, BLOCK);
}

static int create(const char *name) {
    int fd = open(name, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) die(name);
    return fd;
}

static void fill(int fd, int blocks, unsigned char *buf) {
    for (int k = 0; k < blocks; k++) {
        memset(buf, k + 1, BLOCK);
        pwrite_all(fd, buf, BLOCK, (off_t)k * BLOCK);
    }
}

int main(int argc, char **argv) {
    if (argc != 3 || (strcmp(argv[1], "ooc") && strcmp(argv[1], "incore"))) {
        fprintf(stderr, "usage: ooc_app ooc|incore DIR\n");
        return 2;
    }
    int ooc = strcmp(argv[1], "ooc") == 0;
    if (chdir(argv[2]) != 0) die(argv[2]);
    unsigned char *buf = malloc(BLOCK);
    if (!buf) die("malloc");

    int in = open("input.dat", O_RDONLY);
    if (in < 0) die("input.dat");
    pread_all(in, buf, BLOCK, 0);                 /* required input, read once */
    close(in);

    int fa = -1, fb = -1;
    unsigned char *a = NULL, *b = NULL;
    if (ooc) {
        fa = create("scratch_a.dat");
        fill(fa, A_BLOCKS, buf);
    } else {
        a = malloc((size_t)A_BLOCKS * BLOCK);
        if (!a) die("malloc");
        memset(a, 1, (size_t)A_BLOCKS * BLOCK);
    }
    for (int it = 1; it <= ITERS; it++) {
        if (it == 3) {
            if (ooc) {
                fb = create("scratch_b.dat");
                fill(fb, B_BLOCKS, buf);
            } else {
                b = malloc((size_t)B_BLOCKS * BLOCK);
                if (!b) die("malloc");
                memset(b, 2, (size_t)B_BLOCKS * BLOCK);
            }
        }
        if (it <= 4) {
            if (ooc) pass_file(fa, A_BLOCKS, buf);
            else pass_mem(a, A_BLOCKS);
        }
        if (it >= 3) {
            if (ooc) pass_file(fb, B_BLOCKS, buf);
            else pass_mem(b, B_BLOCKS);
        }
        if (it == 4) {
            if (ooc) {
                close(fa);
                unlink("scratch_a.dat");
            } else {
                memcpy(buf, a, BLOCK);
                free(a);
            }
        }
    }
    if (ooc) {
        pread_all(fb, buf, BLOCK, 0);             /* the result: B's first block */
        close(fb);
        unlink("scratch_b.dat");
    } else {
        memcpy(buf, b, BLOCK);
        free(b);
    }
    int out = create("output.dat");               /* required output, written once */
    pwrite_all(out, buf, BLOCK, 0);
    fsync(out);
    close(out);
    printf("mode=%s iterations=%d\n", argv[1], ITERS);
    return 0;
}
