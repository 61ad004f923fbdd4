/*
 * atomic_ckpt.c -- a checkpoint writer that never leaves a half-written
 * checkpoint: each checkpoint is written to a temporary file, fsync'ed and
 * renamed over the previous one (write-temp-then-rename). Traced with strace
 * to make iochar's fixture data/strace/atomic_ckpt.strace (see ../capture.sh).
 *
 * In this order (all paths relative to the working directory):
 *   1. open INPUT, fstat it, mmap it whole (PROT_READ, MAP_SHARED), sum its
 *      bytes through the mapping (no read() calls: strace cannot see them),
 *      munmap, close                                   [memory-mapped input]
 *   2. CKPTS times:                                     [checkpoints]
 *        open "ckpt.tmp" O_WRONLY|O_CREAT|O_TRUNC; posix_fallocate(fd, 0,
 *        CKPT_BYTES) (the fallocate syscall); BLOCKS write()s of BLOCK bytes;
 *        fsync; close; rename("ckpt.tmp", "ckpt.dat")
 *   3. copy the last checkpoint to "ckpt.bak" with sendfile(out, in, NULL,
 *      CKPT_BYTES) (in-fd position used and advanced), then to "ckpt.cp"
 *      with lseek(in, 0, SEEK_SET) and copy_file_range(in, &off_in, out,
 *      &off_out, CKPT_BYTES, 0) with explicit offsets starting at 0, each
 *      looped until the call returns 0; then read() 16 bytes of "ckpt.dat",
 *      which come from offset 0: explicit offsets do not move the fd
 *      position (man 2 copy_file_range)                 [in-kernel copies]
 *   4. ftruncate "ckpt.cp" to BLOCK bytes, unlink "ckpt.bak", and
 *      renameat(AT_FDCWD, "ckpt.cp", AT_FDCWD, "ckpt.old")
 *   5. print "checkpoints=N sum=S" on stdout.
 *
 * Build: gcc -O1 -Wall -o atomic_ckpt atomic_ckpt.c
 * Usage: atomic_ckpt INPUT CKPTS
 *
 * Licence: BSD-3-Clause, same as iochar.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#define BLOCK 16384
#define BLOCKS 3
#define CKPT_BYTES (BLOCK * BLOCKS)

static void die(const char *what)
{
    perror(what);
    exit(1);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s INPUT CKPTS\n", argv[0]);
        return 2;
    }
    int ckpts = atoi(argv[2]);
    static char buf[BLOCK];

    /* 1. the input, read through a mapping */
    int in = open(argv[1], O_RDONLY);
    if (in < 0) die("open input");
    struct stat st;
    if (fstat(in, &st) < 0) die("fstat");
    unsigned char *map = mmap(NULL, st.st_size, PROT_READ, MAP_SHARED, in, 0);
    if (map == MAP_FAILED) die("mmap");
    unsigned long sum = 0;
    for (off_t i = 0; i < st.st_size; i++) sum += map[i];
    munmap(map, st.st_size);
    close(in);

    /* 2. checkpoints: write a temporary file, then rename it over the last one */
    for (int c = 0; c < ckpts; c++) {
        memset(buf, 'a' + c % 26, sizeof buf);
        int fd = open("ckpt.tmp", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) die("open ckpt.tmp");
        if (posix_fallocate(fd, 0, CKPT_BYTES) != 0) die("posix_fallocate");
        for (int b = 0; b < BLOCKS; b++)
            if (write(fd, buf, BLOCK) != BLOCK) die("write");
        if (fsync(fd) < 0) die("fsync");
        close(fd);
        if (rename("ckpt.tmp", "ckpt.dat") < 0) die("rename");
    }

    /* 3. in-kernel copies of the last checkpoint */
    in = open("ckpt.dat", O_RDONLY);
    int out = open("ckpt.bak", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0) die("open copies");
    while (sendfile(out, in, NULL, CKPT_BYTES) > 0) {
    }
    close(out);
    out = open("ckpt.cp", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0) die("open ckpt.cp");
    if (lseek(in, 0, SEEK_SET) != 0) die("lseek");
    loff_t off_in = 0, off_out = 0;
    while (copy_file_range(in, &off_in, out, &off_out, CKPT_BYTES, 0) > 0) {
    }
    if (read(in, buf, 16) != 16) die("read"); /* at 0: the copies left the position */
    close(in);

    /* 4. metadata: truncate, unlink, rename relative to a directory fd */
    if (ftruncate(out, BLOCK) < 0) die("ftruncate");
    close(out);
    if (unlink("ckpt.bak") < 0) die("unlink");
    if (renameat(AT_FDCWD, "ckpt.cp", AT_FDCWD, "ckpt.old") < 0) die("renameat");

    printf("checkpoints=%d sum=%lu\n", ckpts, sum);
    return 0;
}
