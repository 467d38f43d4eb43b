#pragma once
// What the HDF5 reader and writer share: handles that close themselves, and HDF5's own error
// stack turned into one clear reason (the library prints nothing: its messages go into ours).
#include <hdf5.h>

#include <string>
#include <utility>

namespace twobody::hdf5 {

// An HDF5 identifier and the function that closes it (H5Dclose, H5Tclose, ...).
class Handle {
 public:
  Handle() = default;
  Handle(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  Handle(Handle&& o) noexcept : id_(std::exchange(o.id_, H5I_INVALID_HID)), close_(o.close_) {}
  Handle& operator=(Handle&& o) noexcept {
    std::swap(id_, o.id_);
    std::swap(close_, o.close_);
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() {
    if (id_ >= 0 && close_) close_(id_);
  }
  hid_t get() const { return id_; }
  // Gives up the identifier (for a close whose status matters: H5Fclose of a written file).
  hid_t release() { return std::exchange(id_, H5I_INVALID_HID); }
  bool valid() const { return id_ >= 0; }

 private:
  hid_t id_ = H5I_INVALID_HID;
  herr_t (*close_)(hid_t) = nullptr;
};

// IEEE binary16, little-endian: the layout h5py gives numpy's float16 (HDF5 1.10 predefines no half
// type); an invalid handle when the library refuses it.
inline Handle half_float_type() {
  Handle t(H5Tcopy(H5T_IEEE_F32LE), H5Tclose);
  if (t.valid() && (H5Tset_fields(t.get(), 15, 10, 5, 0, 10) < 0 || H5Tset_size(t.get(), 2) < 0 ||
                    H5Tset_ebias(t.get(), 15) < 0))
    return Handle();
  return t;
}

// Turns off HDF5's printing of its error stack (every failure is reported by us, once).
inline void silence_errors() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

// The most specific message on HDF5's error stack ("truncated file: eof = 96, ..."), then clears
// the stack; "" when it is empty.
inline std::string error_reason() {
  std::string reason;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_UPWARD,
      [](unsigned n, const H5E_error2_t* e, void* out) -> herr_t {
        if (n == 0 && e && e->desc) *static_cast<std::string*>(out) = e->desc;
        return 0;
      },
      &reason);
  H5Eclear2(H5E_DEFAULT);
  return reason;
}

}  // namespace twobody::hdf5
