#include "exporters/gzip_stream.h"

#include <dlfcn.h>
#include <zlib.h>  // types and constants only: the functions are loaded (below)

#include <algorithm>
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
  int (*copy)(z_streamp, z_streamp) = nullptr;  // deflateCopy
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
      z.copy = reinterpret_cast<decltype(z.copy)>(dlsym(handle, "deflateCopy"));
    }
    if (!z.init || !z.deflate || !z.end || !z.copy) {
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

// One deflate stream with a gzip header and trailer; its output goes to the sink each call names.
class Deflater {
 public:
  explicit Deflater(int level) : api_(zlib()), out_(kOutputBytes) {
    if (!api_.error.empty()) {
      error_ = api_.error;
      return;
    }
    ready_ = api_.init(&z_, level, Z_DEFLATED, kGzipWindowBits, kMemLevel, Z_DEFAULT_STRATEGY, ZLIB_VERSION,
                       int(sizeof(z_stream))) == Z_OK;
    if (!ready_) error_ = "gzip: zlib could not start (out of memory)";
  }
  ~Deflater() {
    if (ready_) api_.end(&z_);
  }
  Deflater(const Deflater&) = delete;
  Deflater& operator=(const Deflater&) = delete;

  // A copy of `other`'s state (deflateCopy): it goes on from where `other` is, which is left as it was.
  explicit Deflater(const Deflater& other, bool) : api_(other.api_), out_(kOutputBytes), error_(other.error_) {
    if (!error_.empty() || !other.ready_) return;
    ready_ = api_.copy(&z_, const_cast<z_streamp>(&other.z_)) == Z_OK;
    if (!ready_) error_ = "gzip: zlib could not copy its stream (out of memory)";
  }

  // Compresses `size` bytes into `sink` with `flush` (Z_NO_FLUSH, Z_SYNC_FLUSH, Z_FINISH).
  // False once anything failed; sink_failed() tells the sink's failures apart.
  bool run(const char* data, std::size_t size, int flush, OutputStream& sink) {
    do {
      // avail_in is 32 bits: a huge write goes in pieces.
      const std::size_t piece = std::min<std::size_t>(size, 1u << 30);
      z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data));
      z_.avail_in = static_cast<uInt>(piece);
      deflate_all(piece == size ? flush : Z_NO_FLUSH, sink);
      data += piece, size -= piece;
    } while (size > 0 && error_.empty());
    return error_.empty();
  }
  const std::string& error() const { return error_; }
  void fail(std::string error) { error_ = std::move(error); }
  bool sink_failed() const { return sink_failed_; }

 private:
  // Runs deflate until it has taken all input (with Z_FINISH: ended the member; with
  // Z_SYNC_FLUSH: given out everything, up to a byte boundary), handing each full output
  // buffer to the sink.
  void deflate_all(int flush, OutputStream& sink) {
    while (error_.empty()) {
      z_.next_out = out_.data();
      z_.avail_out = static_cast<uInt>(out_.size());
      const int rc = api_.deflate(&z_, flush);
      if (rc == Z_STREAM_ERROR) return void(error_ = "gzip: zlib stream error");
      const std::size_t produced = out_.size() - z_.avail_out;
      if (produced > 0 && !sink.write(reinterpret_cast<const char*>(out_.data()), produced)) {
        sink_failed_ = true;
        return void(error_ = "gzip: write failed");
      }
      if (flush == Z_FINISH ? rc == Z_STREAM_END : z_.avail_in == 0 && z_.avail_out != 0) return;
    }
  }

  const Zlib& api_;
  z_stream z_{};
  bool ready_ = false;
  std::vector<Bytef> out_;
  std::string error_;
  bool sink_failed_ = false;
};

class GzipStream final : public OutputStream {
 public:
  GzipStream(std::unique_ptr<OutputStream> inner, int level) : inner_(std::move(inner)), deflater_(level) {}

  bool write(const char* data, std::size_t size) override {
    return size == 0 || check(deflater_.run(data, size, Z_NO_FLUSH, *inner_));
  }

  std::string commit() override {
    if (deflater_.error().empty()) check(deflater_.run(nullptr, 0, Z_FINISH, *inner_));
    if (!deflater_.error().empty()) return deflater_.error();
    return inner_->commit();
  }
  std::string published_name() const override { return inner_->published_name(); }

 private:
  // The inner stream keeps its own error for its commit(): said from there.
  bool check(bool ok) {
    if (!ok && deflater_.sink_failed()) {
      const std::string inner_error = inner_->commit();
      if (!inner_error.empty()) deflater_.fail(inner_error);
    }
    return ok;
  }

  std::unique_ptr<OutputStream> inner_;
  Deflater deflater_;
};

}  // namespace

struct GzipParts::State {
  explicit State(int level) : deflater(level) {}
  Deflater deflater;
  OutputStream* sink = nullptr;
};

GzipParts::GzipParts(int level) : state_(std::make_unique<State>(level)) {}
GzipParts::~GzipParts() = default;

void GzipParts::to(OutputStream* sink) { state_->sink = sink; }

bool GzipParts::write(const char* data, std::size_t size) {
  if (state_->sink == nullptr) return false;
  return size == 0 || state_->deflater.run(data, size, Z_NO_FLUSH, *state_->sink);
}

bool GzipParts::sync() {
  return state_->sink != nullptr && state_->deflater.run(nullptr, 0, Z_SYNC_FLUSH, *state_->sink);
}

bool GzipParts::end_copy(std::string_view text, OutputStream& out) {
  Deflater copy(state_->deflater, true);
  return copy.run(text.data(), text.size(), Z_FINISH, out);
}

std::string GzipParts::commit() { return state_->deflater.error(); }

std::unique_ptr<OutputStream> gzip_stream(std::unique_ptr<OutputStream> inner, int level) {
  return std::make_unique<GzipStream>(std::move(inner), level);
}

}  // namespace profagent::exporters
