/* report_text.c -- wrapped paragraphs, figures as text, numbered notes (report_text.h). */
#define _GNU_SOURCE
#include "runner/report/report_text.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void kb_text_wrap(FILE *f, const char *text)
{
    int col = 0;
    const char *p = text;
    while (*p) {
        size_t word;
        if (*p == '\n' || *p == ' ') {
            if (*p == '\n')
                fputc('\n', f), col = 0;
            p++;
            continue;
        }
        word = strcspn(p, " \n");
        if (col > 0 && col + 1 + (int)word > KB_REPORT_WRAP) {
            fputc('\n', f);
            col = 0;
        } else if (col > 0) {
            fputc(' ', f);
            col++;
        }
        fwrite(p, 1, word, f);
        col += (int)word;
        p += word;
    }
    if (col > 0)
        fputc('\n', f);
}

void kb_text_para(FILE *f, const char *fmt, ...)
{
    char *text = NULL;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&text, fmt, ap) < 0)
        text = NULL;
    va_end(ap);
    if (text) {
        kb_text_wrap(f, text);
        fputc('\n', f);
    }
    free(text);
}

const char *kb_text_us(char *b, size_t len, double us)
{
    /* three significant figures, as the histograms hold them */
    if (us >= 1e6)
        snprintf(b, len, "%.2f s", us / 1e6);
    else if (us >= 1e5)
        snprintf(b, len, "%.0f ms", us / 1e3);
    else if (us >= 1e4)
        snprintf(b, len, "%.1f ms", us / 1e3);
    else
        snprintf(b, len, "%.2f ms", us / 1e3);
    return b;
}

const char *kb_text_lat(char *b, size_t len, struct kb_stat s)
{
    char v[32];
    if (s.n == 0)
        snprintf(b, len, "-");
    else
        snprintf(b, len, "%s%s", s.bound ? ">= " : "", kb_text_us(v, sizeof(v), s.med));
    return b;
}

const char *kb_text_med(char *b, size_t len, struct kb_stat s, double scale, const char *fmt)
{
    if (s.n == 0)
        snprintf(b, len, "-");
    else
        snprintf(b, len, fmt, scale * s.med);
    return b;
}

static size_t find(const struct kb_text_notes *nt, const char *text)
{
    for (size_t i = 0; i < nt->n; i++)
        if (!strcmp(nt->text[i], text))
            return i + 1;
    return 0;
}

size_t kb_text_note_add(struct kb_text_notes *nt, const char *text)
{
    size_t k = find(nt, text);
    if (!k && nt->n < KB_REPORT_MAX_NOTES && (nt->text[nt->n] = strdup(text)))
        k = ++nt->n;
    if (k)
        nt->rows[k - 1]++;
    return k;
}

size_t kb_text_note_use(struct kb_text_notes *nt, const char *text)
{
    size_t k = find(nt, text);
    if (k)
        nt->due[k - 1] = 1;
    return k;
}

void kb_text_notes_print(FILE *f, struct kb_text_notes *nt)
{
    for (size_t i = 0; i < nt->n; i++)
        if (nt->due[i] && !nt->printed[i]) {
            kb_text_para(f, "[%zu] %s (%d row%s)", i + 1, nt->text[i], nt->rows[i],
                         nt->rows[i] == 1 ? "" : "s");
            nt->printed[i] = 1;
        }
}

void kb_text_notes_free(struct kb_text_notes *nt)
{
    for (size_t i = 0; i < nt->n; i++)
        free(nt->text[i]);
    memset(nt, 0, sizeof(*nt));
}

const char *kb_text_ratio(char *b, size_t len, double v, double lo, double hi)
{
    if (!(v > 0))
        snprintf(b, len, "-");
    else if (fabs(lo - v) < 0.005 && fabs(hi - v) < 0.005)
        snprintf(b, len, "%.2fx", v);
    else if (lo > 0 && hi > 0)
        snprintf(b, len, "%.2fx (%.2f-%.2f)", v, lo, hi);
    else if (lo > 0 || hi > 0)
        snprintf(b, len, "%.2fx (%s %.2f)", v, lo > 0 ? "at least" : "at most", lo > 0 ? lo : hi);
    else
        snprintf(b, len, "%.2fx (both past the top)", v);
    return b;
}
