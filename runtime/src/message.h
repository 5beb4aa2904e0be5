/* One-line messages on stderr, and environment lookup, for the hosted runtime components
 * (trace, TI). The messages use no stdio, so they are usable after fork and in signal
 * handlers.
 *
 *   hkrt_append(dst, cap, src)               append to a NUL-terminated buffer, truncating
 *   hkrt_write_stderr(text)                  write all of text to fd 2 (retrying on EINTR)
 *   hkrt_warn_hint(what, detail, err, hint)  "hookcc: WHAT 'DETAIL': strerror(ERR)HINT\n"
 *   hkrt_warn(what, detail, err)             the same without a hint
 *   hkrt_getenv(name)                        a non-empty environment variable, or NULL
 *
 * DETAIL may be NULL (left out), ERR 0 (no strerror part), HINT NULL. */
#ifndef HOOKCC_RUNTIME_MESSAGE_H
#define HOOKCC_RUNTIME_MESSAGE_H

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

#ifndef HKRT_NOINSTR
#define HKRT_NOINSTR __attribute__((no_instrument_function))
#endif

#define HKRT_MESSAGE_FN static __attribute__((unused)) HKRT_NOINSTR

HKRT_MESSAGE_FN void hkrt_append(char *dst, size_t cap, const char *src)
{
    size_t n = strlen(dst);
    while (*src != '\0' && n + 1 < cap)
        dst[n++] = *src++;
    dst[n] = '\0';
}

HKRT_MESSAGE_FN void hkrt_write_stderr(const char *text)
{
    size_t len = strlen(text);
    while (len > 0) {
        ssize_t n = write(STDERR_FILENO, text, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;
        text += n;
        len -= (size_t)n;
    }
}

HKRT_MESSAGE_FN void hkrt_warn_hint(const char *what, const char *detail, int err,
                                    const char *hint)
{
    char line[PATH_MAX + 256];
    line[0] = '\0';
    hkrt_append(line, sizeof line, "hookcc: ");
    hkrt_append(line, sizeof line, what);
    if (detail != NULL) {
        hkrt_append(line, sizeof line, " '");
        hkrt_append(line, sizeof line, detail);
        hkrt_append(line, sizeof line, "'");
    }
    if (err != 0) {
        hkrt_append(line, sizeof line, ": ");
        hkrt_append(line, sizeof line, strerror(err));
    }
    if (hint != NULL)
        hkrt_append(line, sizeof line, hint);
    hkrt_append(line, sizeof line, "\n");
    hkrt_write_stderr(line);
}

HKRT_MESSAGE_FN void hkrt_warn(const char *what, const char *detail, int err)
{
    hkrt_warn_hint(what, detail, err, NULL);
}

/* getenv, but ignored in a setuid/setgid program, where it could aim the O_TRUNC at any file;
 * an empty value counts as unset. */
HKRT_MESSAGE_FN const char *hkrt_getenv(const char *name)
{
#if defined(__GLIBC__)
    const char *v = secure_getenv(name);
#else
    const char *v = getenv(name);
#endif
    return (v != NULL && v[0] != '\0') ? v : NULL;
}

#endif
