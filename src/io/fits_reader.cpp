// FITS catalogues through cfitsio: a binary or ASCII table (numeric scalar columns, by TTYPE) or a
// 1-D or 2-D image (rows x columns). The file is opened as a plain disk file: cfitsio's extended
// file-name syntax (filters, URLs) is not applied to the names users give. Gzip-compressed files
// are decompressed here (zlib) into a temporary file that cfitsio reads as a plain one: cfitsio's
// own decompression of a sound .gz failed now and then under the test suites' load ("tried to
// move past end of file", "1st key not SIMPLE or XTENSION": CI 2026-11-28, the sanitizers' CLI
// suite 2026-11-29), never alone.
#include <fitsio.h>
#include <zlib.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <string>
#include <cstring>
#include <cstdlib>
#include <cerrno>
#include <cmath>
#include <limits>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include "twobody/detail/io/foreign_read.hpp"
#include "twobody/detail/io/raw_table.hpp"
#include "twobody/error.hpp"

namespace twobody {

namespace {

// Rows a block: cfitsio's buffers are a few MB, and memory grows only with the rows read.
constexpr LONGLONG kBlockValues = 1 << 18;

class FitsFile {
 public:
  explicit FitsFile(const std::string& file) : file_(file) {}
  FitsFile(const FitsFile&) = delete;
  FitsFile& operator=(const FitsFile&) = delete;
  ~FitsFile() {
    int status = 0;
    if (f_) fits_close_file(f_, &status);
    fits_clear_errmsg();
  }
  fitsfile*& get() { return f_; }
  std::string at() const { return hdu_.empty() ? file_ : fmt::format("{}:{}", file_, hdu_); }
  void set_hdu(std::string hdu) { hdu_ = std::move(hdu); }
  // Error(Input) naming the file, the HDU and cfitsio's reason.
  [[noreturn]] void fail(const std::string& what, int status) const {
    char reason[FLEN_STATUS] = "";
    fits_get_errstatus(status, reason);
    fits_clear_errmsg();
    throw_input(status ? fmt::format("{}: {}: {}", at(), what, reason) : fmt::format("{}: {}", at(), what));
  }
  [[noreturn]] void fail(const std::string& what) const { fail(what, 0); }

 private:
  fitsfile* f_ = nullptr;
  std::string file_, hdu_;
};

std::string type_name(int code, LONGLONG repeat) {
  if (code < 0) return "variable-length arrays";
  if (code == TSTRING) return "strings";
  if (repeat > 1) return fmt::format("a vector of {} values", repeat);
  if (repeat == 0) return "no values";
  switch (code) {
    case TLOGICAL: return "logical values";
    case TBIT: return "bits";
    case TCOMPLEX:
    case TDBLCOMPLEX: return "complex numbers";
    default: return fmt::format("type code {}", code);
  }
}

bool numeric(int code) {
  switch (code) {
    case TBYTE: case TSBYTE: case TSHORT: case TUSHORT: case TINT: case TUINT: case TLONG: case TULONG:
    case TLONGLONG: case TULONGLONG: case TFLOAT: case TDOUBLE: return true;
    default: return false;
  }
}

// Room for `rows` values a column, reserved only when the file could hold them (a hostile header
// may claim any size; the reads then fail before the memory grows).
void reserve_rows(RawTable& t, LONGLONG rows, LONGLONG values_per_row, off_t file_size) {
  if (static_cast<double>(rows) * static_cast<double>(values_per_row) <= 8.0 * static_cast<double>(file_size))
    for (auto& c : t.cols) c.reserve(static_cast<std::size_t>(rows));
}

RawTable read_image(FitsFile& f, off_t file_size) {
  int status = 0, naxis = 0;
  LONGLONG naxes[3] = {0, 0, 0};
  if (fits_get_img_dim(f.get(), &naxis, &status) || naxis > 3 || fits_get_img_sizell(f.get(), naxis, naxes, &status))
    f.fail("cannot read the image's size", status);
  if (naxis == 0) f.fail("the HDU holds no data (NAXIS = 0)");
  if (naxis > 2) f.fail(fmt::format("a {}-D image: catalogues are 1-D or 2-D images, or tables", naxis));
  const LONGLONG ncols = naxis == 2 ? naxes[0] : 1, rows = naxis == 2 ? naxes[1] : naxes[0];
  if (rows <= 0 || ncols <= 0) f.fail("the image is empty");
  if (ncols > INT_MAX) f.fail(fmt::format("{} columns is beyond any catalogue", ncols));
  RawTable t;
  t.row_word = "row";
  t.rows = static_cast<std::size_t>(rows);
  t.cols.resize(static_cast<std::size_t>(ncols));
  t.ncols = static_cast<int>(ncols);
  reserve_rows(t, rows, ncols, file_size);
  const LONGLONG block = std::max<LONGLONG>(1, kBlockValues / ncols);
  std::vector<double> buf(static_cast<std::size_t>(std::min(rows, block) * ncols));
  double null_value = std::numeric_limits<double>::quiet_NaN();
  for (LONGLONG r = 0; r < rows; r += block) {
    const LONGLONG n = std::min(block, rows - r);
    int any_null = 0;
    if (fits_read_img_dbl(f.get(), 0, r * ncols + 1, n * ncols, null_value, buf.data(), &any_null, &status))
      f.fail(fmt::format("cannot read image rows {} to {}", r + 1, r + n), status);
    for (LONGLONG i = 0; i < n; ++i)
      for (LONGLONG c = 0; c < ncols; ++c) t.cols[static_cast<std::size_t>(c)].push_back(buf[static_cast<std::size_t>(i * ncols + c)]);
  }
  return t;
}

RawTable read_table(FitsFile& f, off_t file_size) {
  int status = 0, ncols = 0;
  LONGLONG rows = 0;
  if (fits_get_num_rowsll(f.get(), &rows, &status) || fits_get_num_cols(f.get(), &ncols, &status))
    f.fail("cannot read the table's size", status);
  RawTable t;
  t.row_word = "row";
  std::vector<int> numeric_columns;
  for (int c = 1; c <= ncols; ++c) {
    int code = 0;
    LONGLONG repeat = 0, width = 0;
    if (fits_get_eqcoltypell(f.get(), c, &code, &repeat, &width, &status))
      f.fail(fmt::format("cannot read the type of column {}", c), status);
    char name[FLEN_VALUE] = "";
    if (fits_read_key(f.get(), TSTRING, fmt::format("TTYPE{}", c).c_str(), name, nullptr, &status)) {
      status = 0;
      fits_clear_errmsg();
      name[0] = '\0';
    }
    const std::string label = *name ? name : fmt::format("column {}", c);
    if (numeric(code) && repeat == 1) {
      numeric_columns.push_back(c);
      t.names.push_back(name);
    } else {
      t.not_numeric.push_back(fmt::format("{} ({})", label, type_name(code, repeat)));
    }
  }
  if (numeric_columns.empty())
    f.fail(ncols == 0 ? std::string("the table has no columns")
                      : fmt::format("the table has no numeric column (it has: {})", fmt::join(t.not_numeric, ", ")));
  if (rows <= 0) f.fail("the table is empty (no rows)");
  t.rows = static_cast<std::size_t>(rows);
  t.ncols = static_cast<int>(numeric_columns.size());
  t.cols.resize(numeric_columns.size());
  reserve_rows(t, rows, t.ncols, file_size);
  long optimal = 0;
  if (fits_get_rowsize(f.get(), &optimal, &status)) f.fail("cannot read the table", status);
  const LONGLONG block = std::clamp<LONGLONG>(optimal, 1, kBlockValues);
  std::vector<double> buf(static_cast<std::size_t>(std::min(rows, block)));
  double null_value = std::numeric_limits<double>::quiet_NaN();
  for (LONGLONG r = 0; r < rows; r += block) {
    const LONGLONG n = std::min(block, rows - r);
    for (std::size_t k = 0; k < numeric_columns.size(); ++k) {
      int any_null = 0;
      if (fits_read_col(f.get(), TDOUBLE, numeric_columns[k], r + 1, 1, n, &null_value, buf.data(), &any_null, &status))
        f.fail(fmt::format("cannot read rows {} to {} of column {}", r + 1, r + n, t.names[k].empty() ? fmt::format("{}", numeric_columns[k]) : t.names[k]), status);
      t.cols[k].insert(t.cols[k].end(), buf.begin(), buf.begin() + n);
    }
  }
  return t;
}

// Moves to the HDU that `hdu` names (0-based number or EXTNAME), or, without one, to a 2-D primary
// image or else the first table.
int move_to_hdu(FitsFile& f, const std::string& hdu) {
  int status = 0, type = 0;
  if (!hdu.empty()) {
    f.set_hdu(hdu);
    int number = 0;
    const auto [end, ec] = std::from_chars(hdu.data(), hdu.data() + hdu.size(), number);
    if (ec == std::errc() && end == hdu.data() + hdu.size()) {
      if (number < 0 || number == INT_MAX || fits_movabs_hdu(f.get(), number + 1, &type, &status))
        f.fail("no such HDU (HDUs are numbered from 0, the primary)", status);
    } else if (fits_movnam_hdu(f.get(), ANY_HDU, const_cast<char*>(hdu.c_str()), 0, &status)) {
      f.fail("no HDU of that EXTNAME", status);
    } else if (fits_get_hdu_type(f.get(), &type, &status)) {
      f.fail("cannot read the HDU", status);
    }
    return type;
  }
  int naxis = 0;
  if (fits_get_img_dim(f.get(), &naxis, &status)) f.fail("cannot read the primary HDU", status);
  if (naxis == 2) return IMAGE_HDU;
  for (int n = 1;; ++n) {
    if (fits_movrel_hdu(f.get(), 1, &type, &status)) {
      if (status == END_OF_FILE) f.fail("the file holds no table and no 2-D primary image");
      f.fail(fmt::format("cannot read HDU {}", n), status);
    }
    if (type == BINARY_TBL || type == ASCII_TBL) {
      f.set_hdu(std::to_string(n));
      return type;
    }
  }
}

// A temporary file (in $TMPDIR, else /tmp) holding a gzip file's decompressed bytes (every
// member); its path, or Error(Input) (the gzip file's fault) or Error(Resource) (no room for the
// copy) saying why not. A file, not memory: cfitsio's memory driver reads past the end of a
// truncated table (AddressSanitizer, 2026-11-29), its disk driver stops there with "tried to
// move past end of file", as for a plain FITS file.
std::string gunzip_to_temp(const std::string& file) {
  gzFile in = gzopen(file.c_str(), "rb");
  if (!in) throw_input(fmt::format("{}: cannot open the gzip file", file));
  const char* dir = std::getenv("TMPDIR");
  std::string path = std::string(dir && *dir ? dir : "/tmp") + "/twobody-fits-XXXXXX";
  const int fd = ::mkstemp(path.data());
  if (fd < 0) {
    gzclose(in);
    throw Error(ErrorKind::Resource, fmt::format("{}: cannot make a temporary file for its decompressed copy ({}): {}",
                                                 file, path, std::strerror(errno)));
  }
  // Error(Input) for the file's fault, Error(Resource) for the temporary copy's (no room).
  const auto fail = [&](const std::string& why, ErrorKind kind = ErrorKind::Input) {
    gzclose(in);
    ::close(fd);
    ::unlink(path.c_str());
    throw Error(kind, fmt::format("{}: {}", file, why));
  };
  std::vector<char> block(std::size_t(1) << 20);
  for (;;) {
    const int n = gzread(in, block.data(), static_cast<unsigned>(block.size()));
    if (n < 0) {
      int code = 0;
      fail(fmt::format("not a readable gzip file: {}", gzerror(in, &code)));
    }
    if (n == 0) break;
    for (int done = 0; done < n;) {
      const ssize_t w = ::write(fd, block.data() + done, static_cast<std::size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) fail(fmt::format("cannot write its decompressed copy ({}): {}", path, std::strerror(errno)), ErrorKind::Resource);
      done += static_cast<int>(w);
    }
  }
  int code = Z_OK;
  const std::string why = gzerror(in, &code);  // (a truncated stream ends without a read error)
  if (code != Z_OK && code != Z_STREAM_END) fail(fmt::format("not a readable gzip file: {}", why));
  gzclose(in);
  ::close(fd);
  return path;
}

}  // namespace

RawTable read_fits(const std::string& file, const std::string& hdu) {
  struct stat st {};
  const int fd = open_input(file, st);  // the usual reasons: no such file, a directory
  unsigned char magic[2] = {0, 0};
  const bool gzipped = ::pread(fd, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  ::close(fd);
  if (st.st_size == 0) throw_input(fmt::format("{}: the file is empty", file));
  fits_clear_errmsg();
  const io::ForeignRead guard("cfitsio", file);
  FitsFile f(file);
  int status = 0;
  off_t size = st.st_size;
  if (gzipped) {
    const std::string copy = gunzip_to_temp(file);
    struct stat cs {};
    const bool opened = ::stat(copy.c_str(), &cs) == 0 && cs.st_size > 0 &&
                        !fits_open_diskfile(&f.get(), copy.c_str(), READONLY, &status);
    ::unlink(copy.c_str());  // (cfitsio keeps it open: the name goes, the bytes stay until closed)
    if (cs.st_size == 0) throw_input(fmt::format("{}: the gzip file holds nothing", file));
    if (!opened) {
      f.get() = nullptr;
      f.fail("not a readable FITS file (decompressed)", status);
    }
    size = cs.st_size;
  } else if (fits_open_diskfile(&f.get(), file.c_str(), READONLY, &status)) {
    f.get() = nullptr;
    f.fail("not a readable FITS file", status);
  }
  const int type = move_to_hdu(f, hdu);
  return type == IMAGE_HDU ? read_image(f, size) : read_table(f, size);
}

}  // namespace twobody
