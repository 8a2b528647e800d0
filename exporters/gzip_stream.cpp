#include "exporters/gzip_stream.h"

#include <dlfcn.h>
#include <zlib.h>  // types and constants only: the functions are loaded (below)

#include <vector>

namespace profagent::exporters {
namespace {

// zlib's deflate, loaded on first use rather than linked: libprofagent.so is preloaded into
// every process of a run, most of which never write a .json.gz, and a library it needs is one
// more for each of them to load. RTLD_LOCAL: the program's own zlib, if any, is not disturbed.
struct Zlib {
  int (*init)(z_streamp, int, int, int, int, int, const char*, int) = nullptr;  // deflateInit2_
  int (*deflate)(z_streamp, int) = nullptr;
  int (*end)(z_streamp) = nullptr;
  std::string error;  // why it could not be loaded
};

const Zlib& zlib() {
  static const Zlib loaded = [] {
    Zlib z;
    void* handle = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) {
      z.init = reinterpret_cast<decltype(z.init)>(dlsym(handle, "deflateInit2_"));
      z.deflate = reinterpret_cast<decltype(z.deflate)>(dlsym(handle, "deflate"));
      z.end = reinterpret_cast<decltype(z.end)>(dlsym(handle, "deflateEnd"));
    }
    if (!z.init || !z.deflate || !z.end) {
      const char* why = dlerror();
      z.error = std::string("gzip: zlib (libz.so.1) cannot be loaded: ") + (why ? why : "deflate is missing");
    }
    return z;
  }();
  return loaded;
}

constexpr int kGzipWindowBits = 15 + 16;  // a 32 KiB window with a gzip header and trailer
constexpr int kMemLevel = 8;              // zlib's default
constexpr std::size_t kOutputBytes = 256u << 10;

class GzipStream final : public OutputStream {
 public:
  GzipStream(std::unique_ptr<OutputStream> inner, int level) : inner_(std::move(inner)), z_api_(zlib()), out_(kOutputBytes) {
    if (!z_api_.error.empty()) {
      error_ = z_api_.error;
      return;
    }
    ready_ = z_api_.init(&z_, level, Z_DEFLATED, kGzipWindowBits, kMemLevel, Z_DEFAULT_STRATEGY, ZLIB_VERSION,
                         int(sizeof(z_stream))) == Z_OK;
    if (!ready_) error_ = "gzip: zlib could not start (out of memory)";
  }
  ~GzipStream() override {
    if (ready_) z_api_.end(&z_);
  }

  bool write(const char* data, std::size_t size) override {
    while (size > 0 && error_.empty()) {
      // avail_in is 32 bits: a huge write goes in pieces.
      const std::size_t piece = std::min<std::size_t>(size, 1u << 30);
      z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data));
      z_.avail_in = static_cast<uInt>(piece);
      deflate_all(Z_NO_FLUSH);
      data += piece, size -= piece;
    }
    return error_.empty();
  }

  std::string commit() override {
    if (error_.empty()) {
      z_.avail_in = 0;
      deflate_all(Z_FINISH);
    }
    if (!error_.empty()) return error_;
    return inner_->commit();
  }
  std::string published_name() const override { return inner_->published_name(); }

 private:
  // Runs deflate until it has taken all input (or, with Z_FINISH, ended the member), handing
  // each full output buffer to the inner stream.
  void deflate_all(int flush) {
    while (true) {
      z_.next_out = out_.data();
      z_.avail_out = static_cast<uInt>(out_.size());
      const int rc = z_api_.deflate(&z_, flush);
      if (rc == Z_STREAM_ERROR) return void(error_ = "gzip: zlib stream error");
      const std::size_t produced = out_.size() - z_.avail_out;
      if (produced > 0 && !inner_->write(reinterpret_cast<const char*>(out_.data()), produced)) {
        // The inner stream keeps its own error for its commit(); say it from there.
        error_ = inner_->commit();
        if (error_.empty()) error_ = "gzip: write failed";
        return;
      }
      if (flush == Z_FINISH ? rc == Z_STREAM_END : z_.avail_in == 0 && z_.avail_out != 0) return;
    }
  }

  std::unique_ptr<OutputStream> inner_;
  const Zlib& z_api_;
  z_stream z_{};
  bool ready_ = false;
  std::string error_;
  std::vector<Bytef> out_;
};

}  // namespace

std::unique_ptr<OutputStream> gzip_stream(std::unique_ptr<OutputStream> inner, int level) {
  return std::make_unique<GzipStream>(std::move(inner), level);
}

}  // namespace profagent::exporters
