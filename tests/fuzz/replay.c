/* A stand-in for libFuzzer's main, so that `make check` replays the seeds
 * and reproducers of every fuzz target with the ordinary compiler (and, in
 * the sanitizer build, under ASan and UBSan) where clang and libFuzzer are
 * missing: linked with one fuzz_*.c, it hands each file named on the
 * command line, or each file of a directory named there, to
 * LLVMFuzzerTestOneInput, after LLVMFuzzerInitialize when the target has
 * one. A crash or a trap fails the run as it fails the fuzzer; the last
 * line printed before it names the input. Run by tests/fuzz/replay.sh. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: %s: cannot open\n", path);
        return -1;
    }
    size_t capacity = 4096, size = 0, n;
    uint8_t *data = malloc(capacity);
    while (data && (n = fread(data + size, 1, capacity - size, f)) > 0) {
        size += n;
        if (size == capacity) {
            uint8_t *bigger = realloc(data, capacity * 2);
            if (!bigger) {
                free(data);
                data = NULL;
                break;
            }
            data = bigger;
            capacity *= 2;
        }
    }
    fclose(f);
    if (!data) {
        fprintf(stderr, "replay: %s: out of memory\n", path);
        return -1;
    }
    fprintf(stderr, "replay: %s\n", path);
    LLVMFuzzerTestOneInput(data, size);
    free(data);
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Replays the files of a directory in name order (not its subdirectories). */
static int replay_directory(const char *path, int *count)
{
    DIR *dir = opendir(path);
    if (!dir) {
        fprintf(stderr, "replay: %s: cannot open\n", path);
        return -1;
    }
    char **names = NULL;
    size_t n = 0, capacity = 0;
    struct dirent *entry;
    while ((entry = readdir(dir))) {
        if (entry->d_name[0] == '.')
            continue;
        if (n == capacity) {
            capacity = capacity ? capacity * 2 : 64;
            char **bigger = realloc(names, capacity * sizeof *names);
            if (!bigger)
                break;
            names = bigger;
        }
        size_t length = strlen(path) + strlen(entry->d_name) + 2;
        names[n] = malloc(length);
        if (!names[n])
            break;
        snprintf(names[n], length, "%s/%s", path, entry->d_name);
        n++;
    }
    closedir(dir);
    if (n)
        qsort(names, n, sizeof *names, by_name);
    int status = 0;
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
            if (replay_file(names[i]))
                status = -1;
            else
                ++*count;
        }
        free(names[i]);
    }
    free(names);
    return status;
}

int main(int argc, char **argv)
{
    if (LLVMFuzzerInitialize)
        LLVMFuzzerInitialize(&argc, &argv);
    int status = 0, count = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: %s: no such file or directory\n", argv[i]);
            status = 1;
        } else if (S_ISDIR(st.st_mode)) {
            if (replay_directory(argv[i], &count))
                status = 1;
        } else if (replay_file(argv[i])) {
            status = 1;
        } else {
            count++;
        }
    }
    printf("replay: %d inputs, no crash\n", count);
    return status;
}
