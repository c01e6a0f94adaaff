#include "web/standalone_job_page.h"

#include <stdexcept>

#include "web/embedded_assets.h"

namespace tiletune::web {
namespace {

// Our own asset, inlined into an element it must not end early.
std::string_view Inlined(std::string_view name, std::string_view closing_tag) {
  const std::string_view text = *EmbeddedAsset(name);
  if (text.find(closing_tag) != std::string_view::npos) {
    throw std::logic_error(std::string(name) + " holds " + std::string(closing_tag));
  }
  return text;
}

}  // namespace

std::string EscapeHtml(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string ScriptSafeJson(std::string_view json) {
  std::string out;
  out.reserve(json.size());
  for (const char c : json) {
    switch (c) {
      case '<': out += "\\u003c"; break;
      case '>': out += "\\u003e"; break;
      case '&': out += "\\u0026"; break;
      default: out += c;
    }
  }
  return out;
}

std::string StandaloneJobPage(std::string_view title, std::string_view data_json) {
  std::string page =
      "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>";
  page += EscapeHtml(title);
  page += "</title>\n<style>\n";
  page += Inlined("app.css", "</style");
  page += "</style>\n</head>\n<body>\n<main id=\"main\"></main>\n";
  page += "<script type=\"application/json\" id=\"tiletune-data\">";
  page += ScriptSafeJson(data_json);
  page += "</script>\n<script>\n";
  page += Inlined("app.js", "</script");
  page += "</script>\n</body>\n</html>\n";
  return page;
}

}  // namespace tiletune::web
