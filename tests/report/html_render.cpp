// Test driver: renders a `--format json` report file into the HTML page, as
// `profagent report --format html` does, so the page can be checked before and apart from the CLI.
//
//   report_html_render REPORT.json PAGE.html
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "exporters/summaries/summary_html.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: report_html_render REPORT.json PAGE.html\n";
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  std::stringstream json;
  json << in.rdbuf();
  if (!in) {
    std::cerr << "report_html_render: cannot read " << argv[1] << "\n";
    return 2;
  }
  std::ofstream out(argv[2], std::ios::binary | std::ios::trunc);
  out << profagent::exporters::render_summaries_html(json.str());
  out.close();
  if (!out) {
    std::cerr << "report_html_render: cannot write " << argv[2] << "\n";
    return 1;
  }
  return 0;
}
