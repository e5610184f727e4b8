#include "protocol/inline_args.h"

namespace sluice::protocol {
namespace {

// isspace() in the C locale, which Redis runs in for this purpose.
bool IsCSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

bool EndsUnquotedWord(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\0';
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

char UnescapeInDoubleQuotes(char c) {
  switch (c) {
    case 'n':
      return '\n';
    case 'r':
      return '\r';
    case 't':
      return '\t';
    case 'b':
      return '\b';
    case 'a':
      return '\a';
    default:
      return c;
  }
}

// A view that reads like a NUL-terminated C string: '\0' at and past the end.
class CString {
 public:
  explicit CString(std::string_view s) : s_(s.substr(0, s.find('\0'))) {}
  char operator[](size_t i) const { return i < s_.size() ? s_[i] : '\0'; }

 private:
  std::string_view s_;
};

enum class Quote { kNone, kDouble, kSingle };

// A closing quote at p is valid when followed by whitespace or the end of the line.
bool ClosingQuoteIsValid(const CString& line, size_t p) {
  char next = line[p + 1];
  return next == '\0' || IsCSpace(next);
}

// Reads the word starting at *p (a non-blank byte); leaves *p past its terminator.
bool ReadWord(const CString& line, size_t* p, std::string* out) {
  Quote quote = Quote::kNone;
  size_t i = *p;
  bool done = false;
  while (!done) {
    const char c = line[i];
    if (quote == Quote::kDouble) {
      int hi = -1, lo = -1;
      if (c == '\\' && line[i + 1] == 'x' && (hi = HexValue(line[i + 2])) >= 0 &&
          (lo = HexValue(line[i + 3])) >= 0) {
        out->push_back(static_cast<char>(hi * 16 + lo));
        i += 3;
      } else if (c == '\\' && line[i + 1] != '\0') {
        ++i;
        out->push_back(UnescapeInDoubleQuotes(line[i]));
      } else if (c == '"') {
        if (!ClosingQuoteIsValid(line, i)) return false;
        done = true;
      } else if (c == '\0') {
        return false;
      } else {
        out->push_back(c);
      }
    } else if (quote == Quote::kSingle) {
      if (c == '\\' && line[i + 1] == '\'') {
        ++i;
        out->push_back('\'');
      } else if (c == '\'') {
        if (!ClosingQuoteIsValid(line, i)) return false;
        done = true;
      } else if (c == '\0') {
        return false;
      } else {
        out->push_back(c);
      }
    } else if (EndsUnquotedWord(c)) {
      done = true;
    } else if (c == '"') {
      quote = Quote::kDouble;
    } else if (c == '\'') {
      quote = Quote::kSingle;
    } else {
      out->push_back(c);
    }
    if (line[i] != '\0') ++i;
  }
  *p = i;
  return true;
}

}  // namespace

bool SplitInlineArgs(std::string_view text, std::string* bytes,
                     std::vector<std::pair<size_t, size_t>>* spans) {
  const CString line(text);
  size_t p = 0;
  while (true) {
    while (line[p] != '\0' && IsCSpace(line[p])) ++p;
    if (line[p] == '\0') return true;
    const size_t start = bytes->size();
    if (!ReadWord(line, &p, bytes)) return false;
    spans->emplace_back(start, bytes->size() - start);
  }
}

}  // namespace sluice::protocol
