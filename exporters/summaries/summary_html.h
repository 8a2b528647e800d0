// `profagent report --format html`: one self-contained page of the summaries.
//
// The page is built from the `--format json` output (docs/report.md, "Machine-readable
// output"): that JSON is embedded as data, and a hand-written script in the page draws the
// charts (step trace, overview, operator types, top kernels, memory timeline) and the tables
// from it. Style and script are inline; the page fetches nothing, so it opens offline and can be
// mailed or attached to an issue as one file.
#pragma once

#include <string>
#include <string_view>

namespace profagent::exporters {

// The whole page for one `--format json` document (all its traces).
std::string render_summaries_html(std::string_view report_json);

// `json` made safe to place inside <script type="application/json">…</script>: every `<`
// becomes `\u003c`, so no name in the data (a kernel called "</script>") can end the block.
// Valid JSON has `<` only inside strings, where `\u003c` decodes to the same character.
std::string escape_json_for_script(std::string_view json);

}  // namespace profagent::exporters
