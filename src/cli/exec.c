/* `kemu exec`: runs an unmodified CUDA program on the emulator. The
 * program's CUDA runtime (libcudart.so.13 or .so.12) is replaced by kemu's
 * (src/cudart/), which the dynamic loader finds first on LD_LIBRARY_PATH;
 * the emulated device is configured through environment variables that the
 * runtime reads. Before running it, the program's ELF dynamic section is
 * read: a statically linked CUDA runtime or a program that does not use
 * CUDA at all is reported in one line, with the nvcc flag to use. kemu's
 * libcuda.so.1 (the driver API, docs/driver.md) lies next to its libcudart,
 * so driver-API programs find it on the same path; Python interpreters run
 * with $NUMBA_CUDA_DRIVER pointing at it. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "config.h"
#include "cli/checks.h"
#include "cli/cli.h"
#include "kemu/kemu.h"
#include "util.h"

#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef KEMU_PKGLIBDIR
#define KEMU_PKGLIBDIR ""
#endif

/* ---- reading ELF files --------------------------------------------------------- */

typedef struct elf_facts {
    char **needed;      /* DT_NEEDED names */
    int nneeded;
    char *rpath;        /* DT_RPATH, or NULL */
    char *runpath;      /* DT_RUNPATH, or NULL */
    int has_fatbin;     /* a .nv_fatbin or .nvFatBinSegment section: CUDA device code */
} elf_facts;

static void elf_facts_free(elf_facts *f)
{
    for (int i = 0; i < f->nneeded; i++)
        free(f->needed[i]);
    free(f->needed);
    free(f->rpath);
    free(f->runpath);
    memset(f, 0, sizeof *f);
}

static int read_at(int fd, void *buf, size_t n, uint64_t offset)
{
    return pread(fd, buf, n, (off_t)offset) == (ssize_t)n ? 0 : -1;
}

/* A NUL-terminated string of at most 4095 bytes at offset (malloc'd). */
static char *read_string(int fd, uint64_t offset)
{
    char buf[4096];
    ssize_t n = pread(fd, buf, sizeof buf - 1, (off_t)offset);
    if (n <= 0)
        return NULL;
    buf[n] = 0;
    return strdup(buf);
}

/* Reads the dynamic section and section names of a 64-bit little-endian
 * ELF file. Returns 0; 1 when the file is not ELF; -1 when it cannot be
 * read or is not a 64-bit little-endian ELF (msg says which). */
static int elf_read(const char *path, elf_facts *f, char *msg, size_t msglen)
{
    memset(f, 0, sizeof *f);
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        snprintf(msg, msglen, "cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    Elf64_Ehdr eh;
    int rc = -1;
    if (read_at(fd, &eh, sizeof eh, 0) || memcmp(eh.e_ident, ELFMAG, SELFMAG)) {
        close(fd);
        return 1;
    }
    if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB) {
        snprintf(msg, msglen, "%s is not a 64-bit little-endian ELF program", path);
        goto out;
    }
    /* program headers: PT_DYNAMIC and the PT_LOAD map from addresses to offsets */
    Elf64_Phdr *ph = NULL;
    if (eh.e_phnum && eh.e_phentsize == sizeof(Elf64_Phdr)) {
        ph = calloc(eh.e_phnum, sizeof *ph);
        if (!ph || read_at(fd, ph, (size_t)eh.e_phnum * sizeof *ph, eh.e_phoff)) {
            free(ph);
            snprintf(msg, msglen, "%s: cannot read the ELF program headers", path);
            goto out;
        }
    }
    uint64_t dyn_off = 0, dyn_size = 0;
    for (int i = 0; ph && i < eh.e_phnum; i++)
        if (ph[i].p_type == PT_DYNAMIC) {
            dyn_off = ph[i].p_offset;
            dyn_size = ph[i].p_filesz;
        }
    if (dyn_size && dyn_size < (1u << 24)) {
        Elf64_Dyn *dyn = malloc(dyn_size);
        if (dyn && !read_at(fd, dyn, dyn_size, dyn_off)) {
            size_t n = dyn_size / sizeof *dyn;
            uint64_t strtab = 0;
            for (size_t i = 0; i < n && dyn[i].d_tag != DT_NULL; i++)
                if (dyn[i].d_tag == DT_STRTAB)
                    strtab = dyn[i].d_un.d_ptr;
            uint64_t str_off = 0;
            int found = 0;
            for (int i = 0; ph && i < eh.e_phnum; i++)
                if (ph[i].p_type == PT_LOAD && strtab >= ph[i].p_vaddr && strtab < ph[i].p_vaddr + ph[i].p_filesz) {
                    str_off = strtab - ph[i].p_vaddr + ph[i].p_offset;
                    found = 1;
                }
            for (size_t i = 0; found && i < n && dyn[i].d_tag != DT_NULL; i++) {
                if (dyn[i].d_tag == DT_NEEDED) {
                    char *name = read_string(fd, str_off + dyn[i].d_un.d_val);
                    char **grown = name ? realloc(f->needed, (size_t)(f->nneeded + 1) * sizeof *grown) : NULL;
                    if (!grown) {
                        free(name);
                        continue;
                    }
                    f->needed = grown;
                    f->needed[f->nneeded++] = name;
                } else if (dyn[i].d_tag == DT_RPATH && !f->rpath) {
                    f->rpath = read_string(fd, str_off + dyn[i].d_un.d_val);
                } else if (dyn[i].d_tag == DT_RUNPATH && !f->runpath) {
                    f->runpath = read_string(fd, str_off + dyn[i].d_un.d_val);
                }
            }
        }
        free(dyn);
    }
    free(ph);
    /* section names: CUDA device code lives in .nv_fatbin / .nvFatBinSegment */
    if (eh.e_shnum && eh.e_shentsize == sizeof(Elf64_Shdr) && eh.e_shstrndx < eh.e_shnum && eh.e_shnum < 65280) {
        Elf64_Shdr *sh = calloc(eh.e_shnum, sizeof *sh);
        if (sh && !read_at(fd, sh, (size_t)eh.e_shnum * sizeof *sh, eh.e_shoff)) {
            const Elf64_Shdr *names = &sh[eh.e_shstrndx];
            for (int i = 0; i < eh.e_shnum && !f->has_fatbin; i++) {
                char name[32] = "";
                ssize_t got = pread(fd, name, sizeof name - 1, (off_t)(names->sh_offset + sh[i].sh_name));
                if (got > 0) {
                    name[got] = 0;
                    if (!strcmp(name, ".nv_fatbin") || !strcmp(name, ".nvFatBinSegment"))
                        f->has_fatbin = 1;
                }
            }
        }
        free(sh);
    }
    rc = 0;
out:
    close(fd);
    return rc;
}

/* ---- finding libcudart among the dependencies ------------------------------------ */

/* The N of "libcudart.so.N", or 0. */
static int cudart_major(const char *name)
{
    const char *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    if (strncmp(base, "libcudart.so.", 13))
        return 0;
    return atoi(base + 13);
}

static int is_system_library(const char *name)
{
    static const char *const prefixes[] = {"libc.so", "libm.so", "libstdc++.so", "libgcc_s.so", "ld-linux",
                                           "libpthread.so", "libdl.so", "librt.so", "libgomp.so", NULL};
    for (int i = 0; prefixes[i]; i++)
        if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
            return 1;
    return 0;
}

/* Looks for `name` in the colon-separated dirs ($ORIGIN is origin_dir). */
static int search_path(const char *dirs, const char *origin_dir, const char *name, char *out, size_t outlen)
{
    if (!dirs)
        return -1;
    char *copy = strdup(dirs);
    int rc = -1;
    for (char *save = NULL, *d = copy ? strtok_r(copy, ":", &save) : NULL; d && rc; d = strtok_r(NULL, ":", &save)) {
        char dir[PATH_MAX];
        if (!strncmp(d, "$ORIGIN", 7))
            snprintf(dir, sizeof dir, "%s%s", origin_dir, d + 7);
        else if (!strncmp(d, "${ORIGIN}", 9))
            snprintf(dir, sizeof dir, "%s%s", origin_dir, d + 9);
        else
            snprintf(dir, sizeof dir, "%s", d);
        int n = snprintf(out, outlen, "%s/%s", dir, name);
        if (n > 0 && (size_t)n < outlen && access(out, R_OK) == 0)
            rc = 0;
    }
    free(copy);
    return rc;
}

/* Resolves a DT_NEEDED name roughly as the dynamic loader does. */
static int resolve_library(const elf_facts *f, const char *origin_dir, const char *name, char *out, size_t outlen)
{
    static const char default_dirs[] = "/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu:/lib64:/usr/lib64:"
                                       "/usr/local/lib:/usr/local/lib/x86_64-linux-gnu:/lib:/usr/lib:"
                                       "/usr/local/cuda/lib64";
    if (strchr(name, '/')) {
        snprintf(out, outlen, "%s", name);
        return access(out, R_OK);
    }
    if ((!f->runpath && !search_path(f->rpath, origin_dir, name, out, outlen)) ||
        !search_path(getenv("LD_LIBRARY_PATH"), origin_dir, name, out, outlen) ||
        !search_path(f->runpath, origin_dir, name, out, outlen) ||
        !search_path(default_dirs, origin_dir, name, out, outlen))
        return 0;
    return -1;
}

/* The libcudart major version that `path` needs, directly or through its
 * shared-library dependencies (to a depth of 3), or 0. */
static int find_cudart(const char *path, const elf_facts *f, int depth)
{
    for (int i = 0; i < f->nneeded; i++)
        if (cudart_major(f->needed[i]))
            return cudart_major(f->needed[i]);
    /* a driver-API program: kemu's libcuda.so.1 needs libcudart.so.13 */
    for (int i = 0; i < f->nneeded; i++)
        if (!strcmp(f->needed[i], "libcuda.so.1") || !strcmp(f->needed[i], "libcuda.so"))
            return 13;
    if (depth >= 3)
        return 0;
    char origin[PATH_MAX];
    snprintf(origin, sizeof origin, "%s", path);
    char *slash = strrchr(origin, '/');
    if (slash)
        *slash = 0;
    else
        snprintf(origin, sizeof origin, ".");
    for (int i = 0; i < f->nneeded; i++) {
        char lib[PATH_MAX], msg[256];
        if (is_system_library(f->needed[i]) || resolve_library(f, origin, f->needed[i], lib, sizeof lib))
            continue;
        elf_facts sub;
        if (elf_read(lib, &sub, msg, sizeof msg) == 0) {
            int n = find_cudart(lib, &sub, depth + 1);
            elf_facts_free(&sub);
            if (n)
                return n;
        }
    }
    return 0;
}

/* ---- locating kemu's runtime ------------------------------------------------------- */

static int has_runtime(const char *dir, int major)
{
    char path[PATH_MAX + 32];
    int n = snprintf(path, sizeof path, "%s/libcudart.so.%d", dir, major);
    return n > 0 && (size_t)n < sizeof path && access(path, R_OK) == 0;
}

/* Finds the directory holding kemu's libcudart.so.<major>: $KEMU_CUDART_DIR,
 * then next to the libkemu this command runs with (installed: LIBDIR/kemu;
 * build tree: TOP/lib/kemu beside TOP/.libs), then the configured
 * pkglibdir. Also returns libkemu's directory (for LD_LIBRARY_PATH). */
static int locate_runtime(int major, char *dir, size_t dirlen, char *kemu_dir, size_t kemu_dir_len)
{
    kemu_dir[0] = 0;
    Dl_info info;
    if (dladdr((void *)kemu_version, &info) && info.dli_fname) {
        char real[PATH_MAX];
        if (realpath(info.dli_fname, real)) {
            char *slash = strrchr(real, '/');
            if (slash) {
                *slash = 0;
                snprintf(kemu_dir, kemu_dir_len, "%s", real);
            }
        }
    }
    const char *env = getenv("KEMU_CUDART_DIR");
    if (env && *env) {
        snprintf(dir, dirlen, "%s", env);
        return has_runtime(dir, major) ? 0 : -1;
    }
    char candidates[3][PATH_MAX + 32];
    int n = 0;
    if (kemu_dir[0]) {
        snprintf(candidates[n++], sizeof candidates[0], "%s/kemu", kemu_dir);
        snprintf(candidates[n++], sizeof candidates[0], "%s/../lib/kemu", kemu_dir);
    }
    if (KEMU_PKGLIBDIR[0])
        snprintf(candidates[n++], sizeof candidates[0], "%s", KEMU_PKGLIBDIR);
    for (int i = 0; i < n; i++)
        if (has_runtime(candidates[i], major)) {
            char real[PATH_MAX];
            if (!realpath(candidates[i], real) || strlen(real) >= dirlen)
                continue;
            memcpy(dir, real, strlen(real) + 1);
            return 0;
        }
    return -1;
}

/* ---- the command ------------------------------------------------------------------- */

static int prepend_env(const char *name, const char *value)
{
    const char *old = getenv(name);
    if (!old || !*old)
        return setenv(name, value, 1);
    size_t n = strlen(value) + strlen(old) + 2;
    char *joined = malloc(n);
    if (!joined)
        return -1;
    snprintf(joined, n, "%s:%s", value, old);
    int rc = setenv(name, joined, 1);
    free(joined);
    return rc;
}

/* Finds PROGRAM on $PATH when it has no slash, as execvp would. */
static int find_program(const char *program, char *out, size_t outlen)
{
    if (strchr(program, '/')) {
        snprintf(out, outlen, "%s", program);
        return access(out, X_OK);
    }
    const char *path = getenv("PATH");
    return search_path(path ? path : "/usr/local/bin:/usr/bin:/bin", ".", program, out, outlen) ||
           access(out, X_OK) ? -1 : 0;
}

static int is_script(const char *path)
{
    char magic[2];
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return 0;
    int yes = read(fd, magic, 2) == 2 && magic[0] == '#' && magic[1] == '!';
    close(fd);
    return yes;
}

/* ---- the checkers' report of a program that did not print it ------------------- */

static volatile pid_t child_pid;

/* SIGTERM or SIGHUP for kemu exec: the program gets it */
static void forward_signal(int sig)
{
    if (child_pid > 0)
        kill(child_pid, sig);
}

/* The program ended without printing its checkers' report (killed by a
 * signal, _exit, a crash): prints the last snapshot its runtime wrote
 * (the findings of the launches it completed) where the program would
 * have, and writes --report-file. Returns the snapshot's error count. */
static unsigned long print_snapshot(const char *path, const char *program, int status, const char *status_file,
                                    const cli_checks *checks)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    unsigned long errors = 0, warnings = 0, textlen = 0;
    char *text = NULL, *json = NULL;
    if (fscanf(f, "kemu-check-snapshot %lu %lu %lu", &errors, &warnings, &textlen) == 3 && fgetc(f) == '\n' &&
        textlen < (1ul << 30) && (text = malloc(textlen + 1)) && fread(text, 1, textlen, f) == textlen) {
        text[textlen] = 0;
        util_buffer rest = {0};
        char buf[4096];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, f)) > 0)
            util_buffer_append(&rest, buf, n);
        json = rest.data;
    } else {
        errors = 0;
        free(text);
        text = NULL;
    }
    fclose(f);
    if (!text)
        return 0;
    char how[128];
    if (WIFSIGNALED(status))
        snprintf(how, sizeof how, "was killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else if (WIFEXITED(status))
        snprintf(how, sizeof how, "exited with status %d", WEXITSTATUS(status));
    else
        snprintf(how, sizeof how, "ended");
    /* the program's own reports so far went to the log; this one follows */
    struct stat st;
    int reported = stat(status_file, &st) == 0 && st.st_size > 0;
    FILE *log = stderr;
    if (checks->log_file && !(log = fopen(checks->log_file, reported ? "a" : "w"))) {
        fprintf(stderr, "kemu exec: cannot write %s: %s\n", checks->log_file, strerror(errno));
        log = stderr;
    }
    fprintf(log, "kemu exec: %s %s before printing its checkers' report; the findings of its completed "
                 "launches:\n%s", program, how, text);
    if (log != stderr)
        fclose(log);
    if (checks->report_file && json) {
        FILE *r = fopen(checks->report_file, "w");
        if (r) {
            fputs(json, r);
            fclose(r);
        } else {
            fprintf(stderr, "kemu exec: cannot write %s: %s\n", checks->report_file, strerror(errno));
        }
    }
    free(text);
    free(json);
    return errors;
}

int cli_exec_main(int argc, char **argv)
{
    const char *arch = NULL, *schedule = NULL, *uninit = NULL, *dump_ptx = NULL, *dap = NULL;
    int threads = 0, devices = 0, trace = 0, first = -1;
    double timeout = 0;
    int progress = -1; /* --progress 1, --no-progress 0, else: when stderr is a terminal */
    int fidelity = 0; /* --fidelity-report */
    cli_checks checks;
    cli_checks_init(&checks, "exec");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--")) {
            first = i + 1;
            break;
        }
        if (a[0] != '-' || !a[1]) {
            first = i;
            break;
        }
        char name[64];
        const char *eq = strchr(a, '='), *val = NULL;
        size_t nl = eq ? (size_t)(eq - a) : strlen(a);
        if (nl >= sizeof name)
            nl = sizeof name - 1;
        memcpy(name, a, nl);
        name[nl] = 0;
        if (!strcmp(name, "--trace") && !eq) {
            trace = 1; /* the runtime calls; --trace=FILE traces instructions */
            continue;
        }
        if (!strcmp(name, "--progress") || !strcmp(name, "--no-progress")) {
            progress = !strcmp(name, "--progress");
            continue;
        }
        if (!strcmp(name, "--fidelity-report")) {
            fidelity = 1;
            continue;
        }
        static const char *const with_value[] = {"--arch", "--threads", "--devices", "--schedule", "--timeout", "--uninit",
                                                 "--dump-ptx", "--tool", "--log-file", "--error-exitcode",
                                                 "--print-limit", "--report-file", "--racecheck-warp",
                                                 "--racecheck-benign", "--leak-check", "--trace", "--trace-block",
                                                 "--trace-warp", "--trace-lines", "--dap", NULL};
        int known = 0;
        for (int q = 0; with_value[q]; q++)
            known |= !strcmp(name, with_value[q]);
        if (!known)
            return cli_usage_error("exec", "unknown option '%s' (options go before the program)", name);
        if (eq)
            val = eq + 1;
        else if (i + 1 < argc)
            val = argv[++i];
        else
            return cli_usage_error("exec", "option %s needs a value", name);
        if (!strcmp(name, "--arch")) {
            arch = val;
        } else if (!strcmp(name, "--threads")) {
            char *end;
            long t = strtol(val, &end, 10);
            if (*end || t < 1 || t > 4096)
                return cli_usage_error("exec", "--threads wants a positive count, got '%s'", val);
            threads = (int)t;
        } else if (!strcmp(name, "--devices")) {
            char *end;
            long n = strtol(val, &end, 10);
            if (*end || end == val || n < 1 || n > KEMU_MAX_DEVICES)
                return cli_usage_error("exec", "--devices wants a number of devices from 1 to %d, got '%s'",
                                       KEMU_MAX_DEVICES, val);
            devices = (int)n;
        } else if (!strcmp(name, "--schedule")) {
            if (strcmp(val, "default") && strncmp(val, "random:", 7))
                return cli_usage_error("exec", "--schedule wants default or random:SEED, got '%s'", val);
            schedule = val;
        } else if (!strcmp(name, "--timeout")) {
            char *end;
            timeout = strtod(val, &end);
            if (*end || end == val || !isfinite(timeout) || timeout <= 0)
                return cli_usage_error("exec", "--timeout wants a positive number of seconds, got '%s'", val);
        } else if (!strcmp(name, "--uninit")) {
            if (strcmp(val, "nan") && strcmp(val, "zero") && strcmp(val, "pattern"))
                return cli_usage_error("exec", "--uninit wants nan, zero or pattern, got '%s'", val);
            uninit = val;
        } else if (!strcmp(name, "--dump-ptx")) {
            dump_ptx = val;
        } else if (!strcmp(name, "--dap")) {
            const char *port = strrchr(val, ':') ? strrchr(val, ':') + 1 : val;
            char *end;
            long pn = strtol(port, &end, 10);
            if (!*port || *end || pn < 0 || pn > 65535)
                return cli_usage_error("exec", "--dap wants [HOST:]PORT (a port number 0-65535), got '%s'", val);
            dap = val;
        } else {
            int rc = cli_check_option(name, val, &checks);
            if (rc)
                return rc > 0 ? rc : cli_usage_error("exec", "unknown option '%s'", name);
        }
    }
    if (first < 0 || first >= argc)
        return cli_usage_error("exec", "no program given");
    if (arch) {
        kemu_device_config cfg = {arch, 1, NULL, 0, KEMU_UNINIT_NAN};
        kemu_device *probe = NULL;
        kemu_error err;
        if (kemu_device_create(&cfg, &probe, &err))
            return cli_usage_error("exec", "%s", err.message);
        kemu_device_destroy(probe);
    }

    const char *program = argv[first];
    char path[PATH_MAX];
    if (!*program)
        return cli_usage_error("exec", "the program to run is an empty string");
    struct stat st;
    if (find_program(program, path, sizeof path) || (stat(path, &st) == 0 && S_ISDIR(st.st_mode))) {
        if (stat(program, &st) == 0)
            fprintf(stderr, "kemu exec: error: %s: %s\n", program,
                    S_ISDIR(st.st_mode) ? "is a directory, not a program" : "is not executable (no execute permission)");
        else
            fprintf(stderr, "kemu exec: error: %s: no such executable program\n", program);
        return CLI_EXIT_USAGE;
    }
    int major = 13, preload = 0, needs_curand = 0;
    int needs_cublas = 0, needs_cublaslt = 0; /* the program links libcublas / libcublasLt itself */
    int needs_nccl = 0;
    /* a Python interpreter runs CUDA through libraries it loads later
     * (Numba's driver API through $NUMBA_CUDA_DRIVER, set below) */
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    int interpreter = !strncmp(base, "python", 6) || !strncmp(base, "pypy", 4);
    if (!interpreter && !is_script(path)) {
        elf_facts facts;
        char msg[512];
        int rc = elf_read(path, &facts, msg, sizeof msg);
        if (rc < 0) {
            fprintf(stderr, "kemu exec: error: %s\n", msg);
            return CLI_EXIT_USAGE;
        }
        if (rc > 0) {
            fprintf(stderr, "kemu exec: error: %s is neither an ELF program nor a script\n", program);
            return CLI_EXIT_USAGE;
        }
        int found = find_cudart(path, &facts, 0);
        int fatbin = facts.has_fatbin;
        preload = facts.rpath && !facts.runpath; /* DT_RPATH outranks LD_LIBRARY_PATH */
        for (int i = 0; i < facts.nneeded; i++) { /* kemu's vendor libraries (src/vendor/) replace NVIDIA's */
            needs_curand |= !strcmp(facts.needed[i], "libcurand.so.10");
            needs_cublas |= !strncmp(facts.needed[i], "libcublas.so.", 13);
            needs_cublaslt |= !strncmp(facts.needed[i], "libcublasLt.so.", 15);
            needs_nccl |= !strcmp(facts.needed[i], "libnccl.so.2");
        }
        elf_facts_free(&facts);
        if (!found && fatbin) {
            fprintf(stderr, "kemu exec: error: %s links the CUDA runtime statically, which kemu cannot replace; "
                            "rebuild it with `nvcc -cudart shared`\n", program);
            return CLI_EXIT_USAGE;
        }
        if (!found) {
            fprintf(stderr, "kemu exec: error: %s does not use the CUDA runtime (it links neither libcudart.so nor "
                            "libcuda.so); kemu exec runs CUDA programs built with `nvcc -cudart shared`, "
                            "driver-API programs and Python\n", program);
            return CLI_EXIT_USAGE;
        }
        if (found != 12 && found != 13) {
            fprintf(stderr, "kemu exec: error: %s links libcudart.so.%d; kemu provides libcudart.so.13 and "
                            "libcudart.so.12 (rebuild with CUDA 12 or 13 and `nvcc -cudart shared`)\n", program, found);
            return CLI_EXIT_USAGE;
        }
        major = found;
    }
    char dir[PATH_MAX], kemu_dir[PATH_MAX];
    if (locate_runtime(major, dir, sizeof dir, kemu_dir, sizeof kemu_dir)) {
        fprintf(stderr, "kemu exec: error: cannot find kemu's libcudart.so.%d (looked in $KEMU_CUDART_DIR, %s/kemu, "
                        "%s/../lib/kemu%s%s); is kemu fully built and installed?\n",
                major, kemu_dir[0] ? kemu_dir : "LIBDIR", kemu_dir[0] ? kemu_dir : "LIBDIR",
                KEMU_PKGLIBDIR[0] ? ", " : "", KEMU_PKGLIBDIR);
        return CLI_EXIT_UNAVAILABLE;
    }

    if (kemu_dir[0])
        prepend_env("LD_LIBRARY_PATH", kemu_dir);
    prepend_env("LD_LIBRARY_PATH", dir);
    /* the driver API (libcuda.so.1) of a CUDA 12 program uses its runtime */
    char driver_dir[PATH_MAX + 16];
    snprintf(driver_dir, sizeof driver_dir, "%s/cuda12", dir);
    if (major == 12 && access(driver_dir, R_OK) == 0)
        prepend_env("LD_LIBRARY_PATH", driver_dir);
    else
        snprintf(driver_dir, sizeof driver_dir, "%s", dir);
    char driver[PATH_MAX + 32];
    snprintf(driver, sizeof driver, "%s/libcuda.so.1", driver_dir);
    if (access(driver, R_OK) == 0)
        setenv("NUMBA_CUDA_DRIVER", driver, 1);
    /* a program linking cuBLAS where kemu's was not built (no OpenBLAS at
     * configure time) would get NVIDIA's, whose kernels kemu cannot run */
    for (int i = 0; i < 2; i++) {
        const char *name = i ? "libcublasLt" : "libcublas";
        if (!(i ? needs_cublaslt : needs_cublas))
            continue;
        char lib[PATH_MAX + 32];
        snprintf(lib, sizeof lib, "%s/%s.so.%d", dir, name, major);
        if (access(lib, R_OK) != 0)
            fprintf(stderr, "kemu exec: warning: %s links %s.so.%d, but kemu's was not built (configure found no "
                            "OpenBLAS: install libopenblas-dev and rebuild kemu); NVIDIA's cannot run under kemu\n",
                    program, name, major);
    }
    char nccl[PATH_MAX + 32];
    snprintf(nccl, sizeof nccl, "%s/libnccl.so.2", dir);
    if (needs_nccl && access(nccl, R_OK) != 0)
        fprintf(stderr, "kemu exec: warning: %s links libnccl.so.2, but kemu's was not built (configure found no "
                        "nccl.h: give it --with-nccl-include=DIR and rebuild kemu); NVIDIA's cannot run under kemu\n",
                program);
    if (preload && needs_nccl && access(nccl, R_OK) == 0)
        prepend_env("LD_PRELOAD", nccl);
    if (preload) {
        char lib[PATH_MAX + 32];
        snprintf(lib, sizeof lib, "%s/libcudart.so.%d", dir, major);
        prepend_env("LD_PRELOAD", lib);
        snprintf(lib, sizeof lib, "%s/libcurand.so.10", dir);
        if (needs_curand && access(lib, R_OK) == 0)
            prepend_env("LD_PRELOAD", lib);
        /* kemu's cuBLAS libraries too, where the program links them and
         * kemu built them (otherwise the DT_RPATH would find NVIDIA's) */
        const char *vendor[2] = {needs_cublas ? "libcublas" : NULL, needs_cublaslt ? "libcublasLt" : NULL};
        for (int i = 0; i < 2; i++) {
            if (!vendor[i])
                continue;
            snprintf(lib, sizeof lib, "%s/%s.so.%d", dir, vendor[i], major);
            if (access(lib, R_OK) == 0)
                prepend_env("LD_PRELOAD", lib);
        }
    }
    char number[64];
    if (arch)
        setenv("KEMU_ARCH", arch, 1);
    if (threads) {
        snprintf(number, sizeof number, "%d", threads);
        setenv("KEMU_THREADS", number, 1);
    }
    if (devices) {
        snprintf(number, sizeof number, "%d", devices);
        setenv("KEMU_DEVICES", number, 1);
    }
    if (schedule)
        setenv("KEMU_SCHEDULE", schedule, 1);
    if (timeout > 0) {
        snprintf(number, sizeof number, "%g", timeout);
        setenv("KEMU_TIMEOUT", number, 1);
    }
    if (uninit)
        setenv("KEMU_UNINIT", uninit, 1);
    double every = cli_progress_interval(progress);
    if (every > 0) {
        snprintf(number, sizeof number, "%g", every);
        setenv("KEMU_PROGRESS", number, 1);
    }
    if (dump_ptx)
        setenv("KEMU_DUMP_PTX", dump_ptx, 1);
    if (dap) {
        char v[300];
        snprintf(v, sizeof v, "dap:%s", dap);
        setenv("KEMU_DEBUG", v, 1);
    }
    if (trace)
        setenv("KEMU_CUDART_TRACE", "1", 1);
    if (fidelity)
        setenv("KEMU_FIDELITY_REPORT", "1", 1);
    if (checks.trace_file) {
        setenv("KEMU_TRACE_FILE", checks.trace_file, 1);
        static const char *const names[3] = {"KEMU_TRACE_BLOCK", "KEMU_TRACE_WARP", "KEMU_TRACE_LINES"};
        for (int k = 0; k < 3; k++)
            if (checks.trace_texts[k])
                setenv(names[k], checks.trace_texts[k], 1);
    }
    char status_file[] = "/tmp/kemu-exec-XXXXXX", snapshot_file[] = "/tmp/kemu-exec-XXXXXX";
    int status_fd = -1, snapshot_fd = -1;
    if (checks.config.tools) {
        char tools[128] = "";
        static const struct { unsigned bit; const char *name; } names[] = {
            {KEMU_TOOL_MEMCHECK, "memcheck"}, {KEMU_TOOL_RACECHECK, "racecheck"},
            {KEMU_TOOL_INITCHECK, "initcheck"}, {KEMU_TOOL_SYNCCHECK, "synccheck"}};
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
            if (checks.config.tools & names[i].bit) {
                strncat(tools, tools[0] ? "," : "", sizeof tools - strlen(tools) - 1);
                strncat(tools, names[i].name, sizeof tools - strlen(tools) - 1);
            }
        setenv("KEMU_TOOL", tools, 1);
        static const char *const levels[] = {"off", "warn", "error", "auto"};
        setenv("KEMU_RACECHECK_WARP", levels[checks.config.racecheck_warp], 1);
        setenv("KEMU_RACECHECK_BENIGN", levels[checks.config.racecheck_benign], 1);
        if (checks.config.leak_check)
            setenv("KEMU_LEAK_CHECK", "full", 1);
        if (checks.log_file)
            setenv("KEMU_CHECK_LOG_FILE", checks.log_file, 1);
        if (checks.report_file)
            setenv("KEMU_CHECK_REPORT_FILE", checks.report_file, 1);
        if (checks.print_limit) {
            snprintf(number, sizeof number, "%d", checks.print_limit);
            setenv("KEMU_CHECK_PRINT_LIMIT", number, 1);
        }
        status_fd = mkstemp(status_file);
        if (status_fd >= 0) {
            close(status_fd);
            setenv("KEMU_CHECK_STATUS_FILE", status_file, 1);
        }
        snapshot_fd = mkstemp(snapshot_file);
        if (snapshot_fd >= 0) {
            close(snapshot_fd);
            setenv("KEMU_CHECK_SNAPSHOT_FILE", snapshot_file, 1);
        }
    }

    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "kemu exec: error: cannot start %s: %s\n", program, strerror(errno));
        return CLI_EXIT_USAGE;
    }
    if (pid == 0) {
        execv(path, argv + first);
        fprintf(stderr, "kemu exec: error: cannot run %s: %s\n", program, strerror(errno));
        _exit(127);
    }
    /* the program owns the terminal's signals; wait for it. A SIGTERM or
     * SIGHUP sent to kemu exec alone (kill, a job runner) goes on to the
     * program, and kemu exec stays to print the checkers' report */
    signal(SIGINT, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    child_pid = pid;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = forward_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    int code;
    if (WIFEXITED(status)) {
        code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        fprintf(stderr, "kemu exec: %s was killed by signal %d (%s)\n", program, WTERMSIG(status),
                strsignal(WTERMSIG(status)));
        code = 128 + WTERMSIG(status);
    } else {
        code = CLI_EXIT_FAIL;
    }
    unsigned long late_errors = 0;
    if (snapshot_fd >= 0) {
        late_errors = print_snapshot(snapshot_file, program, status, status_file, &checks);
        unlink(snapshot_file);
    }
    if (status_fd >= 0) {
        FILE *f = fopen(status_file, "r");
        unsigned long errors = 0, warnings = 0;
        if (f) {
            if (fscanf(f, "%lu %lu", &errors, &warnings) != 2)
                errors = 0;
            fclose(f);
        }
        errors += late_errors;
        unlink(status_file);
        if (errors && checks.error_exitcode >= 0)
            code = checks.error_exitcode;
    }
    return code;
}
