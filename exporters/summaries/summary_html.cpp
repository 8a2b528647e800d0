#include "exporters/summaries/summary_html.h"

#include "summary_page.inc"  // kSummaryPageCss, kSummaryPageJs: generated from summary_page.{css,js}

namespace profagent::exporters {

// The script and style are placed raw inside <script> and <style>: a closing tag in them would
// end the block early and leave the rest as page text.
static_assert(kSummaryPageJs.find("</script") == std::string_view::npos);
static_assert(kSummaryPageCss.find("</style") == std::string_view::npos);

std::string escape_json_for_script(std::string_view json) {
  std::string out;
  out.reserve(json.size() + json.size() / 64);
  for (char c : json) {
    if (c == '<') {
      out += "\\u003c";
    } else {
      out += c;
    }
  }
  return out;
}

std::string render_summaries_html(std::string_view report_json) {
  std::string page;
  page.reserve(report_json.size() + kSummaryPageCss.size() + kSummaryPageJs.size() + 1024);
  page += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  page += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  page += "<title>profagent report</title>\n<style>\n";
  page += kSummaryPageCss;
  page += "</style>\n</head>\n<body>\n";
  page += "<noscript>This report draws its charts and tables with JavaScript; the data is in "
          "the report-data block of this file.</noscript>\n";
  page += "<main id=\"report\"></main>\n";
  page += "<script type=\"application/json\" id=\"report-data\">";
  page += escape_json_for_script(report_json);
  page += "</script>\n<script>\n";
  page += kSummaryPageJs;
  page += "</script>\n</body>\n</html>\n";
  return page;
}

}  // namespace profagent::exporters
