/* The C runner's --memory mode: a CSV file read into Arrow record batches with nanoarrow, and
 * handed out as an Arrow C stream (what tft_data_create_from_arrow_stream takes). */
#ifndef TFT_CSV_ARROW_STREAM_H
#define TFT_CSV_ARROW_STREAM_H

#include <stddef.h>

#include "tftrain.h" /* struct ArrowArrayStream (guarded, as nanoarrow.h's is) */

/* Reads the CSV file at `path` (a header line, then rows; RFC 4180 quoting; an empty cell is a
 * null) into `out`: record batches of at most `rows_per_batch` rows, each column typed from all
 * its non-empty cells, as the Go runner types them: int64 when every one is an integer, float64
 * when every one is a number, else utf8 (dates and times stay text, which the library parses as
 * it parses the CSV file). The caller owns the stream and releases it, or hands it on.
 * Returns 0, or -1 with a message naming the file and line in `error` (and `out` untouched). */
int csv_arrow_stream_read(const char* path, long rows_per_batch, struct ArrowArrayStream* out,
                          char* error, size_t error_size);

#endif
