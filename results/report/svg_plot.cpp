// SVG plot primitives.
#include "results/report/svg_plot.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace dicebench::results {
namespace {

constexpr int kLeft = 56, kRight = 16, kTop = 44, kBottom = 44;

std::string tick_text(double value, bool percent) {
  if (percent) return fmt::format("{:g}%", value * 100);
  return fmt::format("{:g}", value);
}

}  // namespace

double Scale::unit(double value) const {
  double u = 0;
  if (log) {
    u = (std::log10(std::max(value, min)) - std::log10(min)) / (std::log10(max) - std::log10(min));
  } else {
    u = (value - min) / (max - min);
  }
  return std::clamp(u, 0.0, 1.0);
}

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

SvgPlot::SvgPlot(std::string id, std::string title, Scale x, Scale y, int width, int height)
    : id_(std::move(id)), title_(std::move(title)), x_(x), y_(y), width_(width), height_(height) {}

double SvgPlot::px(double x) const { return kLeft + x_.unit(x) * (width_ - kLeft - kRight); }
double SvgPlot::py(double y) const { return height_ - kBottom - y_.unit(y) * (height_ - kTop - kBottom); }

void SvgPlot::x_axis(const std::vector<double>& ticks, const std::string& label) {
  const double y = height_ - kBottom;
  body_ += fmt::format(R"(<line class="axis" x1="{}" y1="{}" x2="{}" y2="{}"/>)", kLeft, y, width_ - kRight, y);
  for (double tick : ticks) {
    body_ += fmt::format(R"(<line class="grid" x1="{0:.2f}" y1="{1}" x2="{0:.2f}" y2="{2}"/>)", px(tick), kTop, y);
    body_ += fmt::format(R"(<text x="{:.2f}" y="{}" text-anchor="middle">{}</text>)", px(tick), y + 16,
                         tick_text(tick, false));
  }
  body_ += fmt::format(R"(<text x="{}" y="{}" text-anchor="middle" class="label">{}</text>)",
                       (kLeft + width_ - kRight) / 2, height_ - 6, html_escape(label));
}

void SvgPlot::y_axis(const std::vector<double>& ticks, const std::string& label, bool percent) {
  body_ += fmt::format(R"(<line class="axis" x1="{0}" y1="{1}" x2="{0}" y2="{2}"/>)", kLeft, kTop, height_ - kBottom);
  for (double tick : ticks) {
    body_ += fmt::format(R"(<line class="grid" x1="{0}" y1="{1:.2f}" x2="{2}" y2="{1:.2f}"/>)", kLeft, py(tick),
                         width_ - kRight);
    body_ += fmt::format(R"(<text x="{}" y="{:.2f}" text-anchor="end" dominant-baseline="middle">{}</text>)", kLeft - 6,
                         py(tick), tick_text(tick, percent));
  }
  body_ += fmt::format(
      R"svg(<text x="12" y="{0}" text-anchor="middle" class="label" transform="rotate(-90 12 {0})">{1}</text>)svg",
      (kTop + height_ - kBottom) / 2, html_escape(label));
}

void SvgPlot::x_reference(double x, const std::string& label) {
  body_ += fmt::format(R"(<line class="reference" x1="{0:.2f}" y1="{1}" x2="{0:.2f}" y2="{2}"/>)", px(x), kTop,
                       height_ - kBottom);
  body_ += fmt::format(R"(<text x="{:.2f}" y="{}" text-anchor="middle" class="label">{}</text>)", px(x), kTop - 6,
                       html_escape(label));
}

void SvgPlot::polyline(const std::vector<std::pair<double, double>>& points, const std::string& color,
                       const std::string& attributes) {
  std::string coordinates;
  for (const auto& [x, y] : points)
    coordinates += fmt::format("{}{:.2f},{:.2f}", coordinates.empty() ? "" : " ", px(x), py(y));
  body_ += fmt::format(R"(<polyline fill="none" stroke="{}" stroke-width="2" points="{}" {}/>)", color, coordinates,
                       attributes);
}

void SvgPlot::marker(double x, double y, const std::string& color, const std::string& tooltip,
                     const std::string& attributes) {
  body_ +=
      fmt::format(R"(<circle cx="{:.2f}" cy="{:.2f}" r="4" fill="{}" fill-opacity="0.7" {}><title>{}</title></circle>)",
                  px(x), py(y), color, attributes, html_escape(tooltip));
}

void SvgPlot::legend(const std::vector<std::pair<std::string, std::string>>& entries) {
  int x = kLeft + 8;
  for (const auto& [name, color] : entries) {
    body_ += fmt::format(R"(<rect x="{}" y="{}" width="12" height="12" fill="{}"/>)", x, 6, color);
    body_ += fmt::format(R"(<text x="{}" y="{}" dominant-baseline="middle">{}</text>)", x + 16, 12, html_escape(name));
    x += 24 + static_cast<int>(name.size()) * 7;
  }
}

std::string SvgPlot::str() const {
  return fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" id="{}" class="plot" role="img" aria-label="{}" viewBox="0 0 {} {}" width="{}" height="{}"><title>{}</title>{}</svg>)",
      id_, html_escape(title_), width_, height_, width_, height_, html_escape(title_), body_);
}

std::vector<double> log_ticks(double min, double max) {
  std::vector<double> ticks;
  for (int exponent = static_cast<int>(std::floor(std::log10(min)));
       exponent <= static_cast<int>(std::ceil(std::log10(max))); ++exponent) {
    for (double m : {1.0, 2.0, 5.0}) {
      const double tick = m * std::pow(10.0, exponent);
      if (tick >= min * (1 - 1e-9) && tick <= max * (1 + 1e-9)) ticks.push_back(tick);
    }
  }
  return ticks;
}

}  // namespace dicebench::results
