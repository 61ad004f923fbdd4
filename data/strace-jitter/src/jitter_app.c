/*
 * jitter_app.c -- an iterative "application" whose iterations do not all last
 * the same time, traced with strace to make iochar's jittered-cycle fixture
 * (see ../capture.sh).
 *
 * In this order:
 *   1. open WORKDIR/state.dat O_WRONLY|O_CREAT|O_TRUNC once;
 *   2. ITERS times:
 *        compute: busy loop of COMPUTE_MS x (1 + u) milliseconds, u uniform
 *        in [-JITTER_PCT/100, +JITTER_PCT/100], drawn independently for each
 *        iteration from a linear congruential generator seeded with SEED (no
 *        syscalls: the clock is read through the vDSO);
 *        then write the iteration's state: lseek(fd, 0, SEEK_SET) and
 *        STATE_BLOCKS write()s of STATE_BLOCK bytes;        [cyclic I/O]
 *   3. close state.dat and print "iterations=N mean_ms=M" on stdout, M the
 *      mean of the drawn compute times (the program's own record).
 *
 * Every iteration is one cycle of I/O: the writes of iteration i start when
 * its compute phase ends. The mean cycle length is COMPUTE_MS (u has mean 0)
 * plus the few hundred microseconds the writes take; cycle lengths vary by
 * about +-JITTER_PCT percent from one iteration to the next.
 *
 * Build: gcc -O1 -o jitter_app jitter_app.c
 * Usage: jitter_app [-i ITERS] [-c COMPUTE_MS] [-j JITTER_PCT] [-s SEED] WORKDIR
 *
 * Licence: BSD-3-Clause, same as iochar.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define STATE_BLOCK 8192
#define STATE_BLOCKS 4

static char buf[STATE_BLOCK];

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void busy_s(double s)
{
    double end = now_s() + s;
    volatile unsigned long x = 0;
    while (now_s() < end)
        for (int i = 0; i < 1000; i++)
            x += i;
}

/* uniform in [0, 1): a 64-bit LCG (Knuth's MMIX constants), top 53 bits */
static unsigned long long lcg_state;
static double uniform01(void)
{
    lcg_state = lcg_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(lcg_state >> 11) / 9007199254740992.0;
}

int main(int argc, char **argv)
{
    int iters = 40, compute_ms = 150, jitter_pct = 15;
    unsigned long long seed = 1;
    int opt;
    while ((opt = getopt(argc, argv, "i:c:j:s:")) != -1) {
        switch (opt) {
        case 'i': iters = atoi(optarg); break;
        case 'c': compute_ms = atoi(optarg); break;
        case 'j': jitter_pct = atoi(optarg); break;
        case 's': seed = strtoull(optarg, NULL, 10); break;
        default:
            fprintf(stderr, "usage: %s [-i ITERS] [-c MS] [-j PCT] [-s SEED] WORKDIR\n", argv[0]);
            return 2;
        }
    }
    if (optind + 1 != argc) {
        fprintf(stderr, "usage: %s [-i ITERS] [-c MS] [-j PCT] [-s SEED] WORKDIR\n", argv[0]);
        return 2;
    }
    lcg_state = seed;
    char path[4096];
    snprintf(path, sizeof path, "%s/state.dat", argv[optind]);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror("open state");
        return 1;
    }
    memset(buf, 's', sizeof buf);
    double total_ms = 0.0;
    for (int it = 0; it < iters; it++) {
        double u = (2.0 * uniform01() - 1.0) * jitter_pct / 100.0;
        double ms = compute_ms * (1.0 + u);
        total_ms += ms;
        busy_s(ms / 1000.0);
        if (lseek(fd, 0, SEEK_SET) < 0) {
            perror("lseek");
            return 1;
        }
        for (int b = 0; b < STATE_BLOCKS; b++) {
            if (write(fd, buf, STATE_BLOCK) != STATE_BLOCK) {
                perror("write");
                return 1;
            }
        }
    }
    close(fd);
    printf("iterations=%d mean_ms=%.3f\n", iters, total_ms / iters);
    return 0;
}
