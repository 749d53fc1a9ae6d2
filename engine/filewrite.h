/* Parquet file writer: places sealed column chunks (colwrite.h) in a file,
 * streaming to a sink.  The layout is the usual one:
 *   "PAR1", the row groups' chunks in order, every column index, every offset
 *   index, the FileMetaData, its length, "PAR1".
 * A row group's chunks are written as soon as it is added, so memory holds one
 * row group's bytes, plus the metadata of the file so far. */
#ifndef PQ_FILEWRITE_H
#define PQ_FILEWRITE_H

#include "colwrite.h"
#include "footer.h"
#include "io.h"

typedef struct pq_filewriter pq_filewriter;

/* `schema` (the file's schema elements, root first) must stay valid until
 * pq_filewriter_finish; n_leaves is how many chunks each row group has. */
int pq_filewriter_new(const pq_sink *sink, const pq_schema_element *schema, int32_t n_schema, int32_t n_leaves,
                      pq_filewriter **out, pq_error *err);
/* Writes one row group: chunks[0..n_leaves), in leaf order, all with the same
 * number of rows.  Takes the chunks over (they are left zeroed). */
int pq_filewriter_add_row_group(pq_filewriter *w, pq_chunk_out *chunks, pq_error *err);
/* Writes the page indexes and the footer. */
int pq_filewriter_finish(pq_filewriter *w, pq_error *err);
/* Bytes written so far. */
uint64_t pq_filewriter_offset(const pq_filewriter *w);
void pq_filewriter_free(pq_filewriter *w);

/* Re-encodes every row group of `f` (footer `ft`) with these options into a
 * new file on `sink`: the same schema, rows and row groups; decoded with the
 * reader, `batch_rows` rows at a time (0: 8192), and written by this writer,
 * each column chunk a task on one of `threads` threads (0: one per core).
 * The error reported is the first in file order; it names `name`. */
int pq_file_rewrite(pq_file *f, const pq_footer *ft, const char *name, const pq_write_opts *opts,
                    int32_t batch_rows, int threads, const pq_sink *sink, pq_error *err);

#endif
