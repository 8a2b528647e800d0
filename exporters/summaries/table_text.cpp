// The key_averages table as text, laid out as torch's key_averages().table() prints it: column
// widths, name shortening by display width, the time, memory and share formats, the row limit's
// note. The rows themselves are made in tables.cpp.
#include "exporters/summaries/tables.h"

#include <algorithm>
#include <cstdio>

#include "exporters/printable_text.h"

namespace profagent::exporters {
namespace {

// Width of a UTF-8 string in code points (what Python's str.format pads by).
std::size_t display_width(std::string_view s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// The first `width` code points of s.
std::string_view first_code_points(std::string_view s, std::size_t width) {
  std::size_t seen = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80 && seen++ == width) return s.substr(0, i);
  }
  return s;
}

// Control bytes would break the table's lines or drive the terminal; the JSON outputs keep the
// exact name. Only what can be shown is escaped (a name may be hundreds of MB): a prefix of
// 4 bytes per column holds at least that many characters.
std::string shown_name(const std::string& name, std::size_t max_width) {
  std::string s = printable(max_width > 3 ? utf8_prefix(name, 4 * max_width) : std::string_view(name));
  if (max_width > 3 && display_width(s) >= max_width - 3) {
    s = std::string(first_code_points(s, max_width - 3)) + "...";
  }
  return s;
}

class TextTable {
 public:
  void column(std::size_t width) { widths_.push_back(width); }
  void left_align_last() { left_last_ = true; }
  std::string separator() const {
    std::string s;
    for (std::size_t w : widths_) s += std::string(w, '-') + "  ";
    return s + "\n";
  }
  std::string line(const std::vector<std::string>& cells) const {
    std::string s;
    for (std::size_t i = 0; i < widths_.size() && i < cells.size(); ++i) {
      const std::size_t w = display_width(cells[i]);
      const bool left = left_last_ && i + 1 == widths_.size();  // torch left-aligns Source Location
      if (w < widths_[i] && !left) s.append(widths_[i] - w, ' ');
      s += cells[i];
      s += "  ";
    }
    return s + "\n";
  }

  // Where the last column starts (every column is followed by two spaces).
  std::size_t width_before_last() const {
    std::size_t w = 0;
    for (std::size_t i = 0; i + 1 < widths_.size(); ++i) w += widths_[i] + 2;
    return w;
  }

 private:
  std::vector<std::size_t> widths_;
  bool left_last_ = false;
};

std::string format_time_us(double us);

std::string format_avg(uint64_t total_ns, uint64_t count) {
  return format_time_us(count ? double(total_ns) / double(count) / 1000.0 : 0.0);
}

struct Layout {
  bool cuda = false;     // any device time: the CUDA columns are shown (as torch does)
  bool memory = false;   // memory profiled: CPU Mem, Self CPU Mem, CUDA Mem, Self CUDA Mem
  bool shapes = false;   // group_by_input_shape: the "Input Shapes" column
  bool stacks = false;   // group_by_stack_n: the "Source Location" column, one frame per line
  std::size_t name_width = 0;
  std::size_t shapes_width = 0;
  std::size_t stacks_width = 0;
};

std::string first_line(const std::string& text) { return printable(text.substr(0, text.find('\n'))); }

// torch prints a row's further frames under its Source Location, the other cells blank, and a
// blank line after each row.
std::string source_location_tail(const std::string& text, std::size_t column) {
  std::string out;
  for (std::size_t at = text.find('\n'); at != std::string::npos;) {
    const std::size_t next = text.find('\n', at + 1);
    out += std::string(column, ' ') + printable(text.substr(at + 1, next - at - 1)) + "\n";
    at = next;
  }
  return out + "\n";
}

std::vector<std::string> row_cells(const TableRow& r, const Table& t, const Layout& l) {
  std::vector<std::string> c;
  c.push_back(shown_name(r.name, l.name_width));
  c.push_back(format_share(r.self_cpu_ns, t.self_cpu_total_ns));
  c.push_back(format_time(r.self_cpu_ns));
  c.push_back(format_share(r.cpu_total_ns, t.self_cpu_total_ns));
  c.push_back(format_time(r.cpu_total_ns));
  c.push_back(format_avg(r.cpu_total_ns, r.count));
  if (l.cuda) {
    c.push_back(format_time(r.self_cuda_ns));
    c.push_back(format_share(r.self_cuda_ns, t.self_cuda_total_ns));
    c.push_back(format_time(r.cuda_total_ns));
    c.push_back(format_avg(r.cuda_total_ns, r.count));
  }
  if (l.memory) {
    c.push_back(format_memory(r.cpu_memory));
    c.push_back(format_memory(r.self_cpu_memory));
    c.push_back(format_memory(r.cuda_memory));
    c.push_back(format_memory(r.self_cuda_memory));
  }
  c.push_back(std::to_string(r.count));
  if (l.shapes) c.push_back(std::string(first_code_points(printable(r.input_shapes), l.shapes_width)));
  if (l.stacks) c.push_back(first_line(r.source_location));
  return c;
}

std::vector<std::string> header_cells(const Layout& l) {
  std::vector<std::string> c = {"Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total",
                                "CPU time avg"};
  if (l.cuda) c.insert(c.end(), {"Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg"});
  if (l.memory) c.insert(c.end(), {"CPU Mem", "Self CPU Mem", "CUDA Mem", "Self CUDA Mem"});
  c.push_back("# of Calls");
  if (l.shapes) c.push_back("Input Shapes");
  if (l.stacks) c.push_back("Source Location");
  return c;
}

// torch: name column = longest name + 4, capped at max_name_column_width; every other
// column 12 wide; the shapes column = longest shapes + 4, capped.
Layout layout_of(const Table& t, const TableOptions& o) {
  Layout l;
  l.shapes = o.group_by_input_shape;
  l.stacks = !l.shapes && o.group_by_stack_n > 0;
  l.memory = t.memory;
  for (const TableRow& r : t.rows) {
    l.cuda = l.cuda || r.self_cuda_ns > 0 || r.cuda_total_ns > 0;
    l.name_width = std::max(l.name_width, display_width(r.name) + 4);
    l.shapes_width = std::max(l.shapes_width, display_width(r.input_shapes) + 4);
    l.stacks_width = std::max(l.stacks_width, display_width(first_line(r.source_location)));
  }
  if (o.max_name_column_width > 0) l.name_width = std::min(l.name_width, o.max_name_column_width);
  if (o.max_shapes_column_width > 0) {
    l.shapes_width = std::min(l.shapes_width, o.max_shapes_column_width);
  }
  return l;
}

std::string format_time_us(double us) {
  char buf[64];
  if (us >= 1e6) {
    std::snprintf(buf, sizeof buf, "%.3fs", us / 1e6);
  } else if (us >= 1e3) {
    std::snprintf(buf, sizeof buf, "%.3fms", us / 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "%.3fus", us);
  }
  return buf;
}

}  // namespace

std::string format_time(uint64_t ns) { return format_time_us(double(ns) / 1000.0); }

std::string format_memory(int64_t bytes) {
  constexpr double kb = 1024.0, mb = 1024.0 * kb, gb = 1024.0 * mb;
  const double magnitude = bytes < 0 ? -double(bytes) : double(bytes);
  char buf[48];
  if (magnitude >= gb) std::snprintf(buf, sizeof buf, "%.2f Gb", double(bytes) / gb);
  else if (magnitude >= mb) std::snprintf(buf, sizeof buf, "%.2f Mb", double(bytes) / mb);
  else if (magnitude >= kb) std::snprintf(buf, sizeof buf, "%.2f Kb", double(bytes) / kb);
  else std::snprintf(buf, sizeof buf, "%lld b", static_cast<long long>(bytes));
  return buf;
}

std::string format_share(uint64_t part, uint64_t total) {
  if (total == 0) return "NaN";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f%%", double(part) * 100.0 / double(total));
  return buf;
}

std::string render_table(const Table& table, const TableOptions& options) {
  if (table.rows.empty()) return {};
  const Layout l = layout_of(table, options);
  TextTable text;
  text.column(l.name_width);
  const std::size_t numeric = (l.cuda ? 10 : 6) + (l.memory ? 4 : 0);
  for (std::size_t i = 0; i < numeric; ++i) text.column(12);
  if (l.shapes) text.column(l.shapes_width);
  if (l.stacks) text.column(l.stacks_width), text.left_align_last();
  std::string out = text.separator() + text.line(header_cells(l)) + text.separator();
  const std::size_t limit = options.row_limit > 0 ? static_cast<std::size_t>(options.row_limit)
                                                  : table.rows.size();
  for (std::size_t i = 0; i < table.rows.size() && i < limit; ++i) {
    out += text.line(row_cells(table.rows[i], table, l));
    if (l.stacks) out += source_location_tail(table.rows[i].source_location, text.width_before_last());
  }
  out += text.separator();
  out += "Self CPU time total: " + format_time(table.self_cpu_total_ns) + "\n";
  if (l.cuda) out += "Self CUDA time total: " + format_time(table.self_cuda_total_ns) + "\n";
  return out;
}

std::string row_limit_note(std::size_t shown, std::size_t total) {
  if (shown >= total) return {};
  return std::to_string(shown) + " of " + std::to_string(total) +
         " rows shown (--row-limit 0 or PROFAGENT_ROW_LIMIT=-1 shows all).";
}

std::string render_key_averages(const Table& table, const TableOptions& options) {
  const std::size_t rows = table.rows.size();
  const std::size_t shown = options.row_limit > 0 ? std::min<std::size_t>(rows, std::size_t(options.row_limit)) : rows;
  const std::string note = row_limit_note(shown, rows);
  return render_table(table, options) + (note.empty() ? "" : note + "\n");
}

}  // namespace profagent::exporters
