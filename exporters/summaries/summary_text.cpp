// Text and CSV layouts of the summary blocks. Text follows Paddle's summary tables: a dashed
// title line, dashed rules per column, left-aligned cells two spaces apart.
#include <algorithm>

#include "exporters/printable_text.h"
#include "exporters/summaries/overhead_line.h"
#include "exporters/summaries/summary_blocks.h"

namespace profagent::exporters {
namespace {

std::string centered(const std::string& title, std::size_t width, char fill) {
  const std::size_t pad = width > title.size() ? width - title.size() : 0;
  return std::string(pad / 2, fill) + title + std::string(pad - pad / 2, fill);
}

std::string line(const std::vector<std::string>& cells, const std::vector<std::size_t>& widths) {
  std::string out;
  for (std::size_t i = 0; i < widths.size(); ++i) {
    const std::string cell = i < cells.size() ? cells[i] : "";
    out += cell + std::string(widths[i] > cell.size() ? widths[i] - cell.size() : 0, ' ') + "  ";
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out + "\n";
}

std::string rule(const std::vector<std::size_t>& widths) {
  std::string out;
  for (std::size_t w : widths) out += std::string(w, '-') + "  ";
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out + "\n";
}

// Every line of a block as the terminal will show it: names come from the trace, so control
// characters are escaped (printable_text.h) before widths are measured.
SummaryBlock printable_block(const SummaryBlock& in) {
  SummaryBlock b;
  b.name = in.name;
  b.title = printable(in.title);
  auto cells = [](const std::vector<std::string>& from) {
    std::vector<std::string> out;
    out.reserve(from.size());
    for (const std::string& cell : from) out.push_back(printable(cell));
    return out;
  };
  b.preamble = cells(in.preamble);
  b.header = cells(in.header);
  for (const auto& row : in.rows) b.rows.push_back(cells(row));
  for (const auto& [at, text] : in.sections) b.sections.emplace_back(at, printable(text));
  for (const auto& [at, row] : in.subheaders) b.subheaders.emplace_back(at, cells(row));
  b.notes = cells(in.notes);
  for (std::size_t at = 0; at < in.raw.size();) {  // pre-rendered text: its own line breaks stay
    const std::size_t end = std::min(in.raw.find('\n', at), in.raw.size());
    append_printable(b.raw, std::string_view(in.raw).substr(at, end - at));
    b.raw += '\n';
    at = end + 1;
  }
  return b;
}

std::string render_block_text(const SummaryBlock& shown) {
  const SummaryBlock b = printable_block(shown);
  if (!b.raw.empty()) return centered(b.title, 80, '-') + "\n" + b.raw;
  std::vector<std::size_t> widths(b.header.size(), 0);
  auto widen = [&widths](const std::vector<std::string>& cells) {
    for (std::size_t i = 0; i < cells.size() && i < widths.size(); ++i) widths[i] = std::max(widths[i], cells[i].size());
  };
  widen(b.header);
  for (const auto& row : b.rows) widen(row);
  for (const auto& [at, cells] : b.subheaders) widen(cells);
  std::size_t total = 0;
  for (std::size_t w : widths) total += w + 2;
  total = std::max<std::size_t>(total, 52);
  std::string out = centered(b.title, total, b.name == "perf" ? '=' : '-') + "\n";
  for (const std::string& p : b.preamble) out += p + "\n";
  if (!b.header.empty() && b.rows.empty()) {
    out += "(none in this trace)\n";
  } else if (!b.header.empty()) {
    out += rule(widths) + line(b.header, widths) + rule(widths);
    for (std::size_t i = 0; i <= b.rows.size(); ++i) {
      for (const auto& [at, text] : b.sections) {
        if (at == i) out += centered(text, total, '-') + "\n";
      }
      for (const auto& [at, cells] : b.subheaders) {
        if (at == i) out += rule(widths) + line(cells, widths) + rule(widths);
      }
      if (i < b.rows.size()) out += line(b.rows[i], widths);
    }
    out += rule(widths);
  }
  for (const std::string& n : b.notes) out += n + "\n";
  return out;
}

// RFC 4180: a cell with a comma, quote or line break is quoted, quotes doubled; every other
// byte (control characters included) is kept exactly.
std::string csv_cell(std::string_view cell) {
  if (cell.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(cell);
  std::string out = "\"";
  for (char c : cell) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string csv_line(std::string_view first, const std::vector<std::string>& cells) {
  std::string out = csv_cell(first);
  for (const std::string& cell : cells) out += "," + csv_cell(cell);
  return out + "\n";
}

}  // namespace

std::string render_summaries_text(const Trace& trace, const Summaries& s, const SummaryOptions& o) {
  std::string out;
  for (const SummaryBlock& b : summary_blocks(trace, s, o, BlockLayout::Text)) out += render_block_text(b) + "\n";
  return out + overhead_line(trace);
}

std::vector<CsvTable> render_summaries_csv(const Trace& trace, const Summaries& s, const SummaryOptions& o,
                                           std::string_view trace_path) {
  std::vector<CsvTable> out;
  for (const SummaryBlock& b : summary_blocks(trace, s, o, BlockLayout::Csv)) {
    CsvTable& table = out.emplace_back();
    table.name = b.name;
    table.header = csv_line("Trace", b.header);
    for (const auto& row : b.rows) table.rows += csv_line(trace_path, row);
  }
  return out;
}

}  // namespace profagent::exporters
