/* report_text.h -- the text forms the report's writers share: a paragraph wrapped at the
 * report's width, a latency or a statistic as a reader reads it, and numbered notes for a
 * reason several rows share. report.md uses them all; report.html the figure forms, so both
 * print the same cells. Nothing here reads evidence. */
#ifndef KB_REPORT_TEXT_H
#define KB_REPORT_TEXT_H

#include <stddef.h>
#include <stdio.h>

#include "runner/report/report.h"

#define KB_REPORT_WRAP 100        /* report.md's width: a terminal's, tables included */
#define KB_REPORT_MAX_NOTES 256

/* text wrapped at KB_REPORT_WRAP columns on spaces ('\n' in it breaks the line there). */
void kb_text_wrap(FILE *f, const char *text);
/* A paragraph: formatted, wrapped, then a blank line. */
__attribute__((format(printf, 2, 3))) void kb_text_para(FILE *f, const char *fmt, ...);

/* Latency in us as people read it, to three significant figures: "8.26 ms", "85.0 ms",
 * "850 ms", "1.90 s". */
const char *kb_text_us(char *b, size_t len, double us);
/* A latency statistic's median: "-" when no sample had it (an empty histogram is not 0
 * ms), ">= " before it when it is only a lower bound. */
const char *kb_text_lat(char *b, size_t len, struct kb_stat s);
/* A statistic's median through fmt after scaling ("%.1f %%" with 100 for a fraction). */
const char *kb_text_med(char *b, size_t len, struct kb_stat s, double scale, const char *fmt);

/* A ratio with the range around it: "0.48x (0.45-0.52)"; the value alone where the range is
 * that value; an open end (lo or hi 0: a knee past the plan's top rate) said so; "-" when v
 * is none. */
const char *kb_text_ratio(char *b, size_t len, double v, double lo, double hi);

/* Reasons said once: numbered in the order the tables first use them, each printed under
 * the table that first used it, with how many rows share it. Two passes: every row's reason
 * is added first (so the count is whole), then the tables use them as they print. */
struct kb_text_notes {
    char *text[KB_REPORT_MAX_NOTES];     /* owned copies (kb_text_notes_free) */
    int rows[KB_REPORT_MAX_NOTES];
    int due[KB_REPORT_MAX_NOTES], printed[KB_REPORT_MAX_NOTES];
    size_t n;
};
/* Pass one: the note's number (from 1), added when new, its row counted; 0 when full. */
size_t kb_text_note_add(struct kb_text_notes *nt, const char *text);
/* Pass two: the note's number, marked due under the table printing now; 0 when absent. */
size_t kb_text_note_use(struct kb_text_notes *nt, const char *text);
/* Every note due and not yet printed, each "[N] text (k rows)", wrapped. */
void kb_text_notes_print(FILE *f, struct kb_text_notes *nt);
/* The copies; nt is empty after. */
void kb_text_notes_free(struct kb_text_notes *nt);

#endif
