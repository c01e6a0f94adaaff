#pragma once

#include <string>
#include <string_view>

namespace tiletune::web {

// The job page as one self-contained HTML file, for sharing: the web view's
// style and script inlined, and the page's data (a JSON object: "job", the
// v1.Job, and "items", one v1.ListTrialsResponse per item) in a script
// element that the script reads instead of asking a daemon.
std::string StandaloneJobPage(std::string_view title, std::string_view data_json);

// Text for HTML element content and attribute values.
std::string EscapeHtml(std::string_view text);

// JSON that cannot end the script element it sits in: '<', '>' and '&'
// (which occur only inside JSON strings) written as \u escapes, so that a
// job name holding "</script>" stays text.
std::string ScriptSafeJson(std::string_view json);

}  // namespace tiletune::web
