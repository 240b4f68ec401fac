// A minimal SVG plot canvas for the HTML report: linear or log10 scales, axes with ticks and
// labels, polylines, markers and reference lines, written as standalone <svg> text.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dicebench::results {

struct Scale {
  double min = 0, max = 1;
  bool log = false;  // log10; min and max must be > 0
  // Position in [0, 1] of a value (clamped).
  double unit(double value) const;
};

// Escapes text for HTML and SVG content and attribute values.
std::string html_escape(std::string_view text);

class SvgPlot {
 public:
  // `title` becomes the <svg>'s aria-label and <title>; `id` its id.
  SvgPlot(std::string id, std::string title, Scale x, Scale y, int width = 640, int height = 320);

  void x_axis(const std::vector<double>& ticks, const std::string& label);
  void y_axis(const std::vector<double>& ticks, const std::string& label, bool percent = false);
  // A vertical dashed reference line at x.
  void x_reference(double x, const std::string& label);
  // A line through the points in data coordinates; `attributes` are added to the element
  // (e.g. data-* for tests).
  void polyline(const std::vector<std::pair<double, double>>& points, const std::string& color,
                const std::string& attributes = "");
  void marker(double x, double y, const std::string& color, const std::string& tooltip,
              const std::string& attributes = "");
  void legend(const std::vector<std::pair<std::string, std::string>>& entries);  // name, color

  std::string str() const;

 private:
  double px(double x) const;
  double py(double y) const;
  std::string id_, title_;
  Scale x_, y_;
  int width_, height_;
  std::string body_;
};

// Ticks for a log axis: 1, 2 and 5 times the powers of ten within [min, max].
std::vector<double> log_ticks(double min, double max);

}  // namespace dicebench::results
