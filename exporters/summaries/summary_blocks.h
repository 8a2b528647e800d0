// The summaries as blocks of cells: what the text and CSV renderers print. One generator, two
// layouts: in text a stat is one "Total / Avg / Max / Min / Ratio(%)" cell with two decimals;
// in CSV it is five columns, times to the ns and ratios with 12 significant digits.
#pragma once

#include <string>
#include <vector>

#include "exporters/summaries/summaries.h"

namespace profagent::exporters {

struct SummaryBlock {
  std::string name;                       // kSummaryNames entry
  std::string title;                      // "Overview Summary"
  std::vector<std::string> preamble;      // lines before the table ("Time unit: ms")
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  // Text only: a row that is a section title spanning the table ("Thread: All threads merged"),
  // or a second header; index -> text, printed before row `index`.
  std::vector<std::pair<std::size_t, std::string>> sections;
  std::vector<std::pair<std::size_t, std::vector<std::string>>> subheaders;
  std::vector<std::string> notes;         // lines after the table
  std::string raw;                        // a summary printed as-is (key_averages, memory)
};

enum class BlockLayout { Text, Csv };

std::vector<SummaryBlock> summary_blocks(const Trace& trace, const Summaries& s, const SummaryOptions& o,
                                         BlockLayout layout);

// A time in the chosen unit with `decimals` decimals ("12.35").
std::string format_in_unit(uint64_t ns, TimeUnit unit, int decimals);

}  // namespace profagent::exporters
