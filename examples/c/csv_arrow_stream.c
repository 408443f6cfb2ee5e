/* csv_arrow_stream_read: a CSV file into Arrow record batches with nanoarrow.
 *
 * The CSV reading is written here (about 80 lines): C has no CSV library on the registries
 * this project draws from, and the runner's files are plain RFC 4180. The Arrow side is all
 * nanoarrow: schema, builders, and its basic array stream, which owns the batches and releases
 * them exactly once. */
#include "csv_arrow_stream.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nanoarrow/nanoarrow.h"

/* The file's cells, NUL-terminated in place in `text`: `cells[row * columns + column]`, row 0
 * is the header. `lines[row]` is the line each row starts on, for messages. */
typedef struct csv_table {
  char* text;
  char** cells;
  long* lines;
  long rows, columns, cell_count, cell_capacity;
} csv_table;

static void csv_table_free(csv_table* table) {
  free(table->text);
  free(table->cells);
  free(table->lines);
  memset(table, 0, sizeof *table);
}

static int fail(char* error, size_t error_size, const char* format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(error, error_size, format, args);
  va_end(args);
  return -1;
}

static char* read_file(const char* path, char* error, size_t error_size) {
  FILE* file = fopen(path, "rb");
  char* text = NULL;
  long size;
  if (file == NULL) {
    fail(error, error_size, "%s: %s", path, strerror(errno));
    return NULL;
  }
  if (fseek(file, 0, SEEK_END) == 0 && (size = ftell(file)) >= 0 && fseek(file, 0, SEEK_SET) == 0 &&
      (text = malloc((size_t)size + 1)) != NULL) {
    if (fread(text, 1, (size_t)size, file) == (size_t)size) {
      text[size] = '\0';
    } else {
      free(text);
      text = NULL;
    }
  }
  if (text == NULL) fail(error, error_size, "%s: could not read the file", path);
  fclose(file);
  return text;
}

static int add_cell(csv_table* table, char* cell) {
  if (table->cell_count == table->cell_capacity) {
    const long grown = table->cell_capacity == 0 ? 256 : table->cell_capacity * 2;
    char** cells = realloc(table->cells, (size_t)grown * sizeof *cells);
    if (cells == NULL) return -1;
    table->cells = cells;
    table->cell_capacity = grown;
  }
  table->cells[table->cell_count++] = cell;
  return 0;
}

/* Splits `table->text` into cells in place (RFC 4180: quoted cells may hold commas, line breaks
 * and doubled quotes), checking that every row has the header's number of cells. */
static int split_cells(csv_table* table, const char* path, char* error, size_t error_size) {
  char* read = table->text;
  long line = 1, row_cells = 0, rows_capacity = 0;
  if (strncmp(read, "\xEF\xBB\xBF", 3) == 0) read += 3; /* a UTF-8 byte order mark */
  while (*read != '\0') {
    char* cell = read;
    char* write = read;
    char end;
    if (row_cells == 0) { /* a new row: remember its line */
      if (table->rows == rows_capacity) {
        long* lines;
        rows_capacity = rows_capacity == 0 ? 64 : rows_capacity * 2;
        lines = realloc(table->lines, (size_t)rows_capacity * sizeof *lines);
        if (lines == NULL) return fail(error, error_size, "%s: out of memory", path);
        table->lines = lines;
      }
      table->lines[table->rows] = line;
    }
    if (*read == '"') {
      const long opened = line;
      for (++read;; ++read) {
        if (*read == '\0') {
          return fail(error, error_size, "%s:%ld: a quoted cell is never closed", path, opened);
        }
        if (*read == '"' && read[1] == '"') {
          ++read;
        } else if (*read == '"') {
          ++read;
          break;
        }
        if (*read == '\n') ++line;
        *write++ = *read;
      }
      if (*read != ',' && *read != '\n' && *read != '\r' && *read != '\0') {
        return fail(error, error_size, "%s:%ld: text after a quoted cell's closing quote", path,
                    line);
      }
    } else {
      while (*read != ',' && *read != '\n' && *read != '\r' && *read != '\0') *write++ = *read++;
    }
    end = *read;
    if (end == '\r' && read[1] == '\n') ++read;
    if (end != '\0') ++read;
    *write = '\0';
    if (add_cell(table, cell) != 0) return fail(error, error_size, "%s: out of memory", path);
    ++row_cells;
    if (end == ',') continue;
    /* The row ends here. */
    if (table->rows == 0) {
      table->columns = row_cells;
    } else if (row_cells != table->columns) {
      return fail(error, error_size, "%s:%ld: %ld cells, but the header has %ld", path,
                  table->lines[table->rows], row_cells, table->columns);
    }
    ++table->rows;
    row_cells = 0;
    if (end != '\0') ++line;
  }
  if (table->rows < 2) return fail(error, error_size, "%s: no rows under the header", path);
  --table->rows; /* the header is not a row of data */
  return 0;
}

static int is_integer(const char* cell) {
  char* end;
  errno = 0;
  (void)strtoll(cell, &end, 10);
  return errno == 0 && *end == '\0';
}

static int is_number(const char* cell) {
  char* end;
  (void)strtod(cell, &end);
  return *end == '\0';
}

/* int64, float64 or utf8, from every non-empty cell of the column (as the Go runner types). */
static enum ArrowType column_type(const csv_table* table, long column) {
  int integers = 1, numbers = 1;
  long row;
  for (row = 1; row <= table->rows && numbers; ++row) {
    const char* cell = table->cells[row * table->columns + column];
    if (cell[0] == '\0') continue;
    integers = integers && is_integer(cell);
    numbers = numbers && is_number(cell);
  }
  return integers ? NANOARROW_TYPE_INT64 : numbers ? NANOARROW_TYPE_DOUBLE : NANOARROW_TYPE_STRING;
}

static ArrowErrorCode append_cell(struct ArrowArray* column, enum ArrowType type,
                                  const char* cell) {
  if (cell[0] == '\0') return ArrowArrayAppendNull(column, 1);
  switch (type) {
    case NANOARROW_TYPE_INT64: return ArrowArrayAppendInt(column, strtoll(cell, NULL, 10));
    case NANOARROW_TYPE_DOUBLE: return ArrowArrayAppendDouble(column, strtod(cell, NULL));
    default: return ArrowArrayAppendString(column, ArrowCharView(cell));
  }
}

/* One record batch: rows [first, first + count) of the data (1-based in `table`). */
static ArrowErrorCode build_batch(const csv_table* table, const enum ArrowType* types,
                                  const struct ArrowSchema* schema, long first, long count,
                                  struct ArrowArray* out, struct ArrowError* error) {
  ArrowErrorCode code;
  long row, column;
  if ((code = ArrowArrayInitFromSchema(out, schema, error)) != NANOARROW_OK) return code;
  if ((code = ArrowArrayStartAppending(out)) != NANOARROW_OK) goto failed;
  for (row = first; row < first + count; ++row) {
    for (column = 0; column < table->columns; ++column) {
      code = append_cell(out->children[column], types[column],
                         table->cells[row * table->columns + column]);
      if (code != NANOARROW_OK) goto failed;
    }
    if ((code = ArrowArrayFinishElement(out)) != NANOARROW_OK) goto failed;
  }
  if ((code = ArrowArrayFinishBuildingDefault(out, error)) == NANOARROW_OK) return NANOARROW_OK;
failed:
  out->release(out);
  return code;
}

int csv_arrow_stream_read(const char* path, long rows_per_batch, struct ArrowArrayStream* out,
                          char* error, size_t error_size) {
  csv_table table;
  struct ArrowSchema schema;
  struct ArrowArray* batches = NULL;
  struct ArrowError arrow_error;
  struct ArrowArrayStream stream;
  enum ArrowType* types = NULL;
  long batch_count = 0, built = 0, column;
  int result = -1;

  memset(&table, 0, sizeof table);
  schema.release = NULL;
  ArrowErrorInit(&arrow_error);
  if (rows_per_batch < 1) return fail(error, error_size, "rows_per_batch must be at least 1");
  if ((table.text = read_file(path, error, error_size)) == NULL) return -1;
  if (split_cells(&table, path, error, error_size) != 0) goto done;

  types = malloc((size_t)table.columns * sizeof *types);
  batch_count = (table.rows + rows_per_batch - 1) / rows_per_batch;
  batches = calloc((size_t)batch_count, sizeof *batches);
  if (types == NULL || batches == NULL) {
    fail(error, error_size, "%s: out of memory", path);
    goto done;
  }
  ArrowSchemaInit(&schema);
  if (ArrowSchemaSetTypeStruct(&schema, table.columns) != NANOARROW_OK) goto arrow_failed;
  for (column = 0; column < table.columns; ++column) {
    types[column] = column_type(&table, column);
    if (ArrowSchemaSetType(schema.children[column], types[column]) != NANOARROW_OK ||
        ArrowSchemaSetName(schema.children[column], table.cells[column]) != NANOARROW_OK) {
      goto arrow_failed;
    }
  }
  for (built = 0; built < batch_count; ++built) {
    const long first = 1 + built * rows_per_batch;
    const long count =
        first + rows_per_batch - 1 <= table.rows ? rows_per_batch : table.rows - first + 1;
    if (build_batch(&table, types, &schema, first, count, &batches[built], &arrow_error) !=
        NANOARROW_OK) {
      goto arrow_failed;
    }
  }
  /* The stream takes the schema and every batch: from here on it releases them. */
  if (ArrowBasicArrayStreamInit(&stream, &schema, batch_count) != NANOARROW_OK) goto arrow_failed;
  for (built = 0; built < batch_count; ++built) {
    ArrowBasicArrayStreamSetArray(&stream, built, &batches[built]);
  }
  *out = stream;
  result = 0;
  goto done;

arrow_failed:
  fail(error, error_size, "%s: building the Arrow batches failed: %s", path,
       arrow_error.message[0] != '\0' ? arrow_error.message : "out of memory");
done:
  if (result != 0) {
    long i;
    for (i = 0; i < built; ++i) batches[i].release(&batches[i]);
    if (schema.release != NULL) schema.release(&schema);
  }
  free(batches);
  free(types);
  csv_table_free(&table);
  return result;
}
