/* dlopen libunload_a.so, run(4000) (a_work 4000 times), dlclose it; dlopen libunload_b.so,
 * which the loader usually puts at the same address, run(10) (b_work 10 times). Prints
 * "same_address=1" when it did. `unload_main only-a` ends after the dlclose. The libraries are taken from the executable's directory, by
 * their full paths (the trace names them so, for hookprof run anywhere). */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void *load(const char *name, int (**run)(int))
{
    char path[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    if (n <= 0)
        return NULL;
    path[n] = '\0';
    char *slash = strrchr(path, '/');
    if (slash == NULL || (size_t)(slash + 1 - path) + strlen(name) >= sizeof path)
        return NULL;
    strcpy(slash + 1, name);
    void *h = dlopen(path, RTLD_NOW);
    if (h == NULL) {
        fprintf(stderr, "%s\n", dlerror());
        return NULL;
    }
    *run = (int (*)(int))dlsym(h, "run");
    return *run != NULL ? h : NULL;
}

int main(int argc, char **argv)
{
    int (*run_a)(int), (*run_b)(int);
    void *a = load("libunload_a.so", &run_a);
    if (a == NULL)
        return 1;
    run_a(4000);
    void *at = (void *)run_a;
    dlclose(a);
    if (argc > 1 && strcmp(argv[1], "only-a") == 0) {
        printf("a unloaded\n");
        return 0; /* the trace finishes with libunload_a.so's records gone */
    }
    void *b = load("libunload_b.so", &run_b);
    if (b == NULL)
        return 1;
    run_b(10);
    printf("same_address=%d\n", (void *)run_b == at);
    return 0;
}
