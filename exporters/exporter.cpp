#include "exporters/exporter.h"

#include "exporters/export_entries.h"
#include "exporters/output_file.h"

namespace profagent::exporters {
namespace {

class MemoryStream final : public OutputStream {
 public:
  MemoryStream(std::map<std::string, std::string>& files, std::string name)
      : files_(files), name_(std::move(name)) {}
  bool write(const char* data, std::size_t size) override {
    bytes_.append(data, size);
    return true;
  }
  std::string commit() override {
    files_[name_] = std::move(bytes_);
    return {};
  }

 private:
  std::map<std::string, std::string>& files_;
  std::string name_;
  std::string bytes_;
};

}  // namespace

std::unique_ptr<OutputStream> MemorySink::open(const std::string& name, std::string*) {
  return std::make_unique<MemoryStream>(files_, name);
}

std::string ExportResult::written_line() const {
  if (paths.empty()) return "wrote nothing";
  std::string line = "wrote";
  for (std::size_t i = 0; i < paths.size(); ++i) line += (i ? ", " : " ") + paths[i];
  return line;
}

ExportResult export_window(const Trace& trace, const ExportOptions& options, OutputSink& sink) {
  ExportResult result;
  WindowOutputs outputs(trace, options);
  for (const ExportEntry& entry : export_entries()) {
    if (entry.wanted(outputs)) entry.write(outputs, sink, result);
  }
  return result;
}

ExportResult export_window(const Trace& trace, const ExportOptions& options) {
  std::string error;
  std::unique_ptr<OutputDir> dir = OutputDir::create(options.output_dir, &error);
  if (dir) return export_window(trace, options, *dir);
  ExportResult result;
  result.errors.push_back(error);
  WindowOutputs outputs(trace, options);
  write_stderr_table(outputs, result);  // the table still reaches stderr
  return result;
}

}  // namespace profagent::exporters
