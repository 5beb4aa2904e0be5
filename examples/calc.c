/* calc: a small expression interpreter, the bundled example for hookcc's quick start.
 *
 * It tokenizes, parses (recursive descent) and evaluates a list of arithmetic expressions with
 * variables, many times over, then sorts the results: enough calls, recursion and distinct
 * functions to make a flat profile worth reading. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *text;
    size_t pos;
    double vars[26];
} Parser;

static double parse_expr(Parser *p);

static void skip_space(Parser *p) {
    while (isspace((unsigned char)p->text[p->pos]))
        p->pos++;
}

static int peek(Parser *p) {
    skip_space(p);
    return p->text[p->pos];
}

static double parse_number(Parser *p) {
    char *end;
    double v = strtod(p->text + p->pos, &end);
    p->pos = (size_t)(end - p->text);
    return v;
}

static double parse_primary(Parser *p) {
    int c = peek(p);
    if (c == '(') {
        p->pos++;
        double v = parse_expr(p);
        if (peek(p) == ')')
            p->pos++;
        return v;
    }
    if (c == '-') {
        p->pos++;
        return -parse_primary(p);
    }
    if (islower(c)) {
        p->pos++;
        return p->vars[c - 'a'];
    }
    return parse_number(p);
}

static double parse_power(Parser *p) {
    double base = parse_primary(p);
    if (peek(p) == '^') {
        p->pos++;
        double exp = parse_power(p);
        double r = 1;
        for (int i = 0; i < (int)exp; i++)
            r *= base;
        return r;
    }
    return base;
}

static double parse_term(Parser *p) {
    double v = parse_power(p);
    for (int c = peek(p); c == '*' || c == '/'; c = peek(p)) {
        p->pos++;
        double rhs = parse_power(p);
        v = c == '*' ? v * rhs : v / rhs;
    }
    return v;
}

static double parse_expr(Parser *p) {
    double v = parse_term(p);
    for (int c = peek(p); c == '+' || c == '-'; c = peek(p)) {
        p->pos++;
        double rhs = parse_term(p);
        v = c == '+' ? v + rhs : v - rhs;
    }
    return v;
}

double evaluate(const char *text, double x) {
    Parser p = {.text = text, .pos = 0};
    p.vars['x' - 'a'] = x;
    p.vars['y' - 'a'] = x / 2;
    return parse_expr(&p);
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(void) {
    static const char *programs[] = {
        "1 + 2 * 3 - 4 / (5 - 3)",
        "x ^ 3 - 2 * x ^ 2 + y - 7",
        "((x + 1) * (x - 1)) / (y + 1) + -(x * y)",
        "2 ^ 10 - x * (y + (x - (y * 2)))",
    };
    enum { N = 2000 };
    static double results[N * 4];
    size_t n = 0;
    for (int i = 0; i < N; i++)
        for (size_t k = 0; k < sizeof programs / sizeof *programs; k++)
            results[n++] = evaluate(programs[k], i * 0.5);
    qsort(results, n, sizeof *results, compare);
    printf("calc: %zu expressions evaluated; min %.2f, median %.2f, max %.2f\n", n, results[0],
           results[n / 2], results[n - 1]);
    return 0;
}
