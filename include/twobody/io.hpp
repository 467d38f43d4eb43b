#pragma once
// Catalogue readers. Every reader validates on the way in: a missing or empty file, a row with
// the wrong number of columns, an unparsable or non-finite value is an Error(Input) that names the
// file and the line (or point).
#include <functional>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "twobody/points.hpp"
#include "twobody/vectors.hpp"

namespace twobody {

enum class FileFormat { Auto, Text, Npy, FastFood, Hdf5, Fits, Npz, Fvecs, Bvecs, Ivecs };

// The format a path's extension names, in any case: .npy, .ff, .h5/.hdf5/.hdf, .fits/.fit/.fits.gz,
// .npz, .fvecs, .bvecs, .ivecs, otherwise text (the readers' Auto, and the writers' choice of
// format). A part after the file's name ("cat.h5:/table", "cat.fits:2") does not count.
FileFormat format_of(const std::string& path);
// The file a catalogue's name points into: "cat.h5:/table" -> "cat.h5", "cat.fits:2" -> "cat.fits".
std::string file_of(const std::string& path);
// Whether this build reads and writes the format (HDF5 and FITS are optional at build time).
bool format_supported(FileFormat f);

struct ReadOptions {
  FileFormat format = FileFormat::Auto;  // Auto: by extension (.npy, .ff, any case), otherwise text
  std::vector<int> columns;              // 1-based; empty: see column_names, then default_columns
  std::vector<std::string> column_names;  // coordinates by the names of a text file's header line
  // Without columns or names: 0 takes every column the weights and regions do not; n the first n
  // of those (the CLI: 3, on the sky 2), the rest reported in Catalogue::unused_columns.
  int default_columns = 0;
  int weight_column = 0;                 // 1-based; 0: no weights
  // 1-based column of integer jackknife region labels (>= 0); 0: none. Labels are kept as given
  // (PointSet::regions()); the correlation functions number the regions they find.
  int region_column = 0;
  // 1-based columns of per-point values read beside the points (kk's kappa, kde's regression
  // values): Catalogue::values, in this order. Never coordinates by default.
  std::vector<int> value_columns;
};

// Text: numbers separated by blanks, or by one ',' or ';' (an empty field between two is an error),
// one point per line, '#' starts a comment; a first line of words is a header of column names; a
// UTF-8 byte-order mark is skipped. Errors name the file, line and column.
// .npy: a 2-D float64 or float32 array (one point per row), or a 1-D array (one coordinate).
// .ff: Corrfunc's fast-food format (Fortran records: header, then one record per column).
// HDF5, "file.h5[:/path]": a 2-D or 1-D numeric dataset, a compound dataset (a table: its numeric
// fields are the columns, by name), or a group whose 1-D numeric datasets of one length are the
// columns (by name, in creation order when the file keeps it, else by name). Without a path, the
// file's only dataset.
// FITS, "file.fits[:HDU]" (HDU by 0-based number or EXTNAME): a binary or ASCII table (numeric
// scalar columns, by TTYPE name) or a 1-D or 2-D image (rows x columns). Without an HDU, a 2-D
// primary image, else the first table.
// .fvecs, .bvecs, .ivecs: each vector a point (at most kMaxDim columns; read_vectors takes any).
PointSet read_points(const std::string& path, const ReadOptions& opt = {});

// What a file held besides the points: its header's names (text files with one) and the columns
// the read left out (1-based; only when it chose them by default_columns).
struct Catalogue {
  PointSet points;
  std::vector<std::vector<double>> values;  // ReadOptions::value_columns' values
  std::vector<std::string> names;
  std::vector<int> unused_columns;
};
Catalogue read_catalogue(const std::string& path, const ReadOptions& opt = {});

// "1,2,3" -> {1, 2, 3}; throws Error(Config) on anything else.
std::vector<int> parse_column_list(const std::string& spec);

// Vectors of any dimension (similarity joins, k-NN): one vector per row, element type kept
// (vectors.hpp). By the path's format:
// .fvecs, .bvecs, .ivecs (the ANN corpora's: each row an int32 dimension, then that many float32,
// uint8 or int32 values, little-endian; every row of one dimension): float32 rows (.bvecs' bytes
// are exact in float32), .ivecs float64 rows.
// .npy: a 2-D array of float16, float32 or float64 (element type kept), or of int32 or int64
// (float64 rows; an int64 beyond 2^53 in magnitude is an error, float64 would not hold it); a 1-D
// array is n vectors of one dimension.
// HDF5, "file.h5[:/dataset]": a 2-D (or 1-D) numeric dataset, such as the ANN benchmarks' /train
// and /test; float32 and float16 (h5py's layout) kept, float64 and integers as float64 (int64 within
// 2^53); a table (compound dataset, group of columns) as the catalogue reader takes it.
// Anything else (text of any number of columns, FITS, .ff): the columns read_catalogue would read,
// as float64 rows, with no limit on their number.
// ReadOptions' columns (by number, or by name where the file names them) select and order the
// vectors' columns in every format; without them, every column the weight, region and value
// columns do not take (the first default_columns of those, when set). Every value is checked
// finite: an Error(Input) names the file, the row (a text file's line) and the column; so does any
// malformed file (a truncated row, a row of another dimension, an empty file).
VectorSet read_vectors(const std::string& path, const ReadOptions& opt = {});

}  // namespace twobody

namespace twobody {
// Every writer below writes its output whole or not at all: a file goes into a temporary file
// beside it and is renamed over the path only once every byte is written, synced and closed, so a
// failed or interrupted run never leaves a partial file under the output's name and never spoils a
// good one. "-" (or "") is standard output, written through the descriptor the process was given
// (so `>> file` appends), flushed and checked. A path that is not a regular file (/dev/null, a
// FIFO) is written in place. Every failure is an Error(Output) naming the path and the reason.
void write_output(const std::string& path, const std::function<void(std::ostream&)>& fill);
bool is_standard_output(const std::string& path);

// Writes points as text (one per line, columns separated by spaces, 17 significant digits so they
// read back exactly) or, by the path's extension, as a float64 array of one point a row: .npy,
// .npz (the array "points"), .h5 (the dataset /points); weights become a last column.
void write_points(const std::string& path, const PointSet& p);
// A dense rows x cols matrix (row-major): as a float64 array of that shape in a .npy, a .npz (the
// array "matrix") or an .h5 (the dataset /matrix); any other path as text, one row a line, values
// to 17 significant digits.
void write_matrix(const std::string& path, std::size_t rows, std::size_t cols, std::span<const double> values);
// Vectors, one a row, by the path's extension: .npy keeps the element type ('<f2', '<f4', '<f8');
// .fvecs holds float32 (float16 always fits; float64 only when every value is exactly a float32,
// else Error(Config) naming the first row and column that is not); .bvecs and .ivecs likewise for
// integers of 0..255 and of int32; .h5 the dataset /vectors, element type kept; any other path
// text, one vector a line, 17 significant digits (exact on reading back).
void write_vectors(const std::string& path, const VectorSet& v);
}  // namespace twobody
