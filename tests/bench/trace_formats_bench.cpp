// The trace formats side by side on a real trace (PROFAGENT_TRACE_FORMAT): bytes per event and
// flush events/s of json, json.gz and perfetto, and the compressors json.gz could use, measured on
// the trace's own JSON bytes. Prints figures only; never fails on time (label bench). Targets (the
// README's): perfetto <= 40 bytes/event, >= 5 M events/s for the compact format on one core.
//
//   trace_formats_bench TRACE [--files DIR]
// TRACE: a trace the agent wrote (.trace.json, .json.gz or .pftrace), loaded as `profagent
// report` loads it into the window's Trace; each format is then written from that Trace, as the
// agent writes it at a window's end. "writer" figures write into memory that is counted and
// dropped (the writer's own CPU cost); --files DIR also writes each file there (atomic, to disk).
// Events are counted as the JSON trace counts them (slices, instants, counters, flow ends).
#include <libdeflate.h>
#include <time.h>
#include <zlib.h>
#include <zstd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "agent/report/trace_loader.h"
#include "exporters/chrome_trace.h"
#include "exporters/exporter.h"
#include "exporters/gzip_stream.h"
#include "exporters/json_writer.h"
#include "exporters/output_file.h"
#include "exporters/perfetto_trace.h"

using namespace profagent;
using namespace profagent::exporters;

namespace {

// Counts the bytes into a total its owner keeps (the stream may be owned by a gzip stream).
class CountingStream final : public OutputStream {
 public:
  explicit CountingStream(uint64_t& total) : total_(total) {}
  bool write(const char*, std::size_t size) override { return total_ += size, true; }
  std::string commit() override { return {}; }

 private:
  uint64_t& total_;
};

// json.gz as the agent writes it: the JSON writer through gzip_stream at `level`; its size.
uint64_t gzip_trace(const Trace& trace, int level) {
  uint64_t size = 0;
  std::unique_ptr<OutputStream> gz = gzip_stream(std::make_unique<CountingStream>(size), level);
  {
    JsonWriter w(*gz);
    write_chrome_trace(trace, "bench.trace.json.gz", w);
  }
  gz->commit();
  return size;
}

class KeepStream final : public OutputStream {
 public:
  bool write(const char* data, std::size_t size) override { return bytes.append(data, size), true; }
  std::string commit() override { return {}; }
  std::string bytes;
};

double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

// The best of `runs` CPU times of `body`: the machine is shared, the minimum is the writer's cost.
template <typename F>
double best_cpu(int runs, F&& body) {
  double best = 1e30;
  for (int i = 0; i < runs; ++i) {
    const double t0 = cpu_seconds();
    body();
    best = std::min(best, cpu_seconds() - t0);
  }
  return best;
}

void row(const char* what, uint64_t events, uint64_t bytes, double cpu, uint64_t json_bytes) {
  std::printf("%-34s %11llu bytes %6.1f B/event %5.1fx smaller  cpu %7.3f s  %6.2f M events/s\n", what,
              (unsigned long long)bytes, double(bytes) / double(events), double(json_bytes) / double(bytes), cpu,
              double(events) / cpu / 1e6);
}

void compressor(const char* what, const std::string& json, uint64_t events, double json_cpu,
                const std::function<std::size_t()>& compress) {
  std::size_t size = 0;
  const double cpu = best_cpu(3, [&] { size = compress(); });
  std::printf("%-34s %11zu bytes %5.1fx  %7.1f MB/s of JSON  cpu %6.3f s = %3.0f%% of writing the JSON; "
              "json+this %5.2f M events/s\n",
              what, size, double(json.size()) / double(size), double(json.size()) / cpu / 1e6, cpu,
              100.0 * cpu / json_cpu, double(events) / (json_cpu + cpu) / 1e6);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: trace_formats_bench TRACE [--files DIR]\n");
    return 2;
  }
  const std::string dir = argc > 3 && std::string(argv[2]) == "--files" ? argv[3] : "";
  std::string error;
  std::optional<report::LoadedTrace> loaded = report::load_trace(argv[1], error);
  if (!loaded) {
    std::fprintf(stderr, "trace_formats_bench: %s\n", error.c_str());
    return 1;
  }
  const Trace& trace = loaded->trace;
  std::printf("trace: %s: %zu host records, %zu device records\n", argv[1], trace.host.size(), trace.device.size());

  // JSON, kept in memory for the compressors below.
  KeepStream json_out;
  uint64_t events = 0;
  const double json_cpu = best_cpu(3, [&] {
    json_out.bytes.clear();
    JsonWriter w(json_out);
    write_chrome_trace(trace, "bench.trace.json", w, &events);
  });
  const std::string& json = json_out.bytes;
  std::printf("%llu events (as the JSON trace counts them)\n\nwriters (best of 3, one core):\n", (unsigned long long)events);
  row("json", events, json.size(), json_cpu, json.size());
  for (int level : {1, 6}) {
    uint64_t size = 0;
    const double cpu = best_cpu(3, [&] { size = gzip_trace(trace, level); });
    const std::string what = "json.gz (zlib level " + std::to_string(level) + (level == kTraceGzipLevel ? ", chosen)" : ")");
    row(what.c_str(), events, size, cpu, json.size());
  }
  PerfettoFigures figures;
  const double perfetto_cpu = best_cpu(3, [&] {
    uint64_t size = 0;
    CountingStream out(size);
    write_perfetto_trace(trace, "bench.pftrace", out, &figures);
  });
  row("perfetto", events, figures.bytes, perfetto_cpu, json.size());
  if (figures.events != events) {
    std::printf("  (the Perfetto writer counted %llu events)\n", (unsigned long long)figures.events);
  }

  std::printf("\ncompressors on the JSON bytes (%.1f MB; best of 3):\n", double(json.size()) / 1e6);
  std::vector<char> out(std::max<std::size_t>(compressBound(uLong(json.size())), ZSTD_compressBound(json.size())) + 4096);
  for (int level : {1, 3, 6, 9}) {
    const std::string what = "zlib " + std::to_string(level) + " (streamed, 1 member)";
    compressor(what.c_str(), json, events, json_cpu, [&] {
      uint64_t size = 0;
      std::unique_ptr<OutputStream> gz = gzip_stream(std::make_unique<CountingStream>(size), level);
      for (std::size_t at = 0; at < json.size(); at += 1u << 20) {
        gz->write(json.data() + at, std::min<std::size_t>(1u << 20, json.size() - at));
      }
      gz->commit();
      return std::size_t(size);
    });
  }
  for (int level : {1, 6, 12}) {
    const std::string what = "libdeflate " + std::to_string(level) + " (whole buffer)";
    compressor(what.c_str(), json, events, json_cpu, [&] {
      libdeflate_compressor* c = libdeflate_alloc_compressor(level);
      const std::size_t n = libdeflate_gzip_compress(c, json.data(), json.size(), out.data(), out.size());
      libdeflate_free_compressor(c);
      return n;
    });
  }
  for (int level : {1, 3}) {
    const std::string what = "zstd " + std::to_string(level) + " (streamed)";
    compressor(what.c_str(), json, events, json_cpu, [&] {
      ZSTD_CCtx* c = ZSTD_createCCtx();
      ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level);
      ZSTD_outBuffer o{out.data(), out.size(), 0};
      for (std::size_t at = 0; at < json.size(); at += 1u << 20) {
        ZSTD_inBuffer in{json.data() + at, std::min<std::size_t>(1u << 20, json.size() - at), 0};
        while (in.pos < in.size) ZSTD_compressStream2(c, &o, &in, ZSTD_e_continue);
      }
      ZSTD_inBuffer none{nullptr, 0, 0};
      while (ZSTD_compressStream2(c, &o, &none, ZSTD_e_end) != 0) {
      }
      ZSTD_freeCCtx(c);
      return o.pos;
    });
  }

  if (!dir.empty()) {
    std::unique_ptr<OutputDir> out_dir = OutputDir::create(dir, &error);
    if (!out_dir) return std::fprintf(stderr, "trace_formats_bench: %s\n", error.c_str()), 1;
    std::printf("\nto files in %s (wall, atomic writes):\n", dir.c_str());
    for (const char* formats : {"json", "json.gz", "perfetto"}) {
      ExportOptions options;
      options.write_table = options.write_summary = options.write_folded = false;
      options.summaries.names.clear();
      parse_trace_formats(formats, options.trace_formats);
      const auto t0 = std::chrono::steady_clock::now();
      const double c0 = cpu_seconds();
      const ExportResult r = export_window(trace, options, *out_dir);
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::printf("%-10s wall %6.3f s = %5.2f M events/s, cpu %6.3f s; %s\n", formats, wall, double(events) / wall / 1e6,
                  cpu_seconds() - c0, r.ok() ? r.written_line().c_str() : r.errors.front().c_str());
      for (const std::string& path : r.paths) std::remove(path.c_str());
    }
  }
  return 0;
}
