/* A hand-built Arrow C stream producer for the C API tests (plain C99): 2 series "a", "b" of
 * 30 rows (columns t int64, origin utf8, y float64), in batches, with faults on request. It
 * counts its stream's release calls and its live arrays, so a test sees release run exactly
 * once. The group column is named like a column of the forecasts on purpose (issue 42: they
 * must not come out with two columns "origin"). */
#ifndef TFT_ARROW_PRODUCER_H
#define TFT_ARROW_PRODUCER_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tftrain.h"

#define PRODUCER_SERIES_ROWS 30
#define PRODUCER_MAX_BATCH 64

typedef struct producer {
  int total_rows, rows_per_batch, next_row, batches_given;
  int fail_schema; /* get_schema fails */
  int fail_batch;  /* get_next fails on this batch (0-based), -1: never */
  int omit_y;      /* the schema lacks y */
  int y_binary;    /* y is binary ("z"), not float64 */
  int y_null_row;  /* this row's y is null, -1: none */
  int stream_releases, arrays_alive;
} producer;

static inline void producer_init(producer* p) {
  memset(p, 0, sizeof *p);
  p->total_rows = 2 * PRODUCER_SERIES_ROWS;
  p->rows_per_batch = 16;
  p->fail_batch = -1;
  p->y_null_row = -1;
}

static inline int64_t producer_t(int row) { return row % PRODUCER_SERIES_ROWS; }
static inline const char* producer_g(int row) { return row < PRODUCER_SERIES_ROWS ? "a" : "b"; }
static inline double producer_y(int row) {
  const int s = row / PRODUCER_SERIES_ROWS, t = row % PRODUCER_SERIES_ROWS;
  return (s + 1) * 10.0 + (t % 7) + 0.25 * (t % 3);
}

/* The same rows as CSV text at `path`. */
static inline void producer_write_csv(const char* path) {
  FILE* f = fopen(path, "w");
  int r;
  fprintf(f, "t,origin,y\n");
  for (r = 0; r < 2 * PRODUCER_SERIES_ROWS; ++r) {
    fprintf(f, "%lld,%s,%.17g\n", (long long)producer_t(r), producer_g(r), producer_y(r));
  }
  fclose(f);
}

typedef struct schema_block {
  struct ArrowSchema children[3];
  struct ArrowSchema* pointers[3];
} schema_block;

static inline void release_child_schema(struct ArrowSchema* s) { s->release = NULL; }
static inline void release_schema(struct ArrowSchema* s) {
  int64_t i;
  for (i = 0; i < s->n_children; ++i) {
    if (s->children[i]->release != NULL) s->children[i]->release(s->children[i]);
  }
  free(s->private_data);
  s->release = NULL;
}

static inline void child_schema(struct ArrowSchema* s, const char* format, const char* name) {
  memset(s, 0, sizeof *s);
  s->format = format;
  s->name = name;
  s->flags = ARROW_FLAG_NULLABLE;
  s->release = release_child_schema;
}

static inline int producer_get_schema(struct ArrowArrayStream* stream, struct ArrowSchema* out) {
  producer* p = (producer*)stream->private_data;
  schema_block* b;
  int n = 0, i;
  if (p->fail_schema) return EIO;
  b = (schema_block*)calloc(1, sizeof *b);
  child_schema(&b->children[n++], "l", "t");
  child_schema(&b->children[n++], "u", "origin");
  if (!p->omit_y) child_schema(&b->children[n++], p->y_binary ? "z" : "g", "y");
  for (i = 0; i < n; ++i) b->pointers[i] = &b->children[i];
  memset(out, 0, sizeof *out);
  out->format = "+s";
  out->name = "";
  out->n_children = n;
  out->children = b->pointers;
  out->release = release_schema;
  out->private_data = b;
  return 0;
}

typedef struct array_block {
  producer* owner;
  struct ArrowArray children[3];
  struct ArrowArray* pointers[3];
  const void* root_buffers[1];
  const void* buffers[3][3];
  int64_t t[PRODUCER_MAX_BATCH];
  int32_t g_offsets[PRODUCER_MAX_BATCH + 1];
  char g_chars[PRODUCER_MAX_BATCH];
  double y[PRODUCER_MAX_BATCH];
  int32_t y_offsets[PRODUCER_MAX_BATCH + 1];
  char y_chars[4 * PRODUCER_MAX_BATCH];
  uint8_t y_valid[PRODUCER_MAX_BATCH / 8 + 1];
} array_block;

static inline void release_child_array(struct ArrowArray* a) { a->release = NULL; }
static inline void release_array(struct ArrowArray* a) {
  array_block* b = (array_block*)a->private_data;
  b->owner->arrays_alive--;
  free(b);
  a->release = NULL;
}

static inline void child_array(struct ArrowArray* a, int64_t length, int64_t n_buffers,
                               const void** buffers, int64_t null_count) {
  memset(a, 0, sizeof *a);
  a->length = length;
  a->null_count = null_count;
  a->n_buffers = n_buffers;
  a->buffers = buffers;
  a->release = release_child_array;
}

static inline int producer_get_next(struct ArrowArrayStream* stream, struct ArrowArray* out) {
  producer* p = (producer*)stream->private_data;
  array_block* b;
  int n, i, k = 0, nulls = 0;
  if (p->batches_given == p->fail_batch) return EIO;
  memset(out, 0, sizeof *out);
  if (p->next_row >= p->total_rows) return 0; /* released: the end */
  n = p->total_rows - p->next_row;
  if (n > p->rows_per_batch) n = p->rows_per_batch;
  b = (array_block*)calloc(1, sizeof *b);
  b->owner = p;
  for (i = 0; i < n; ++i) {
    const int row = p->next_row + i;
    b->t[i] = producer_t(row);
    b->g_offsets[i + 1] = i + 1;
    b->g_chars[i] = producer_g(row)[0];
    b->y[i] = producer_y(row);
    b->y_offsets[i + 1] = 3 * (i + 1);
    memcpy(b->y_chars + 3 * i, "1.5", 3);
    if (row == p->y_null_row) {
      ++nulls;
    } else {
      b->y_valid[i / 8] |= (uint8_t)(1u << (i % 8));
    }
  }
  b->buffers[0][0] = NULL;
  b->buffers[0][1] = b->t;
  child_array(&b->children[k++], n, 2, b->buffers[0], 0);
  b->buffers[1][0] = NULL;
  b->buffers[1][1] = b->g_offsets;
  b->buffers[1][2] = b->g_chars;
  child_array(&b->children[k++], n, 3, b->buffers[1], 0);
  if (!p->omit_y) {
    b->buffers[2][0] = nulls > 0 ? (const void*)b->y_valid : NULL;
    if (p->y_binary) {
      b->buffers[2][1] = b->y_offsets;
      b->buffers[2][2] = b->y_chars;
      child_array(&b->children[k++], n, 3, b->buffers[2], nulls);
    } else {
      b->buffers[2][1] = b->y;
      child_array(&b->children[k++], n, 2, b->buffers[2], nulls);
    }
  }
  for (i = 0; i < k; ++i) b->pointers[i] = &b->children[i];
  b->root_buffers[0] = NULL;
  out->length = n;
  out->n_buffers = 1;
  out->buffers = b->root_buffers;
  out->n_children = k;
  out->children = b->pointers;
  out->release = release_array;
  out->private_data = b;
  p->arrays_alive++;
  p->next_row += n;
  p->batches_given++;
  return 0;
}

static inline const char* producer_last_error(struct ArrowArrayStream* stream) {
  producer* p = (producer*)stream->private_data;
  return p->fail_schema ? "no schema here" : "the cursor died";
}

static inline void producer_release(struct ArrowArrayStream* stream) {
  producer* p = (producer*)stream->private_data;
  p->stream_releases++;
  stream->release = NULL;
}

static inline struct ArrowArrayStream producer_stream(producer* p) {
  struct ArrowArrayStream s;
  s.get_schema = producer_get_schema;
  s.get_next = producer_get_next;
  s.get_last_error = producer_last_error;
  s.release = producer_release;
  s.private_data = p;
  return s;
}

#endif
