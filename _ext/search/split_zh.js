/* The Chinese site's search: how a query is cut into words (_ext/editions.py puts this file, with the
 * synonyms filled in, into the Chinese site's language_data.js, which search.html loads after
 * searchtools.js: this splitQuery replaces searchtools.js's, and reads the index it loaded).
 *
 * Sphinx's Chinese index holds the words jieba cut the pages into (with the term table as its
 * dictionary), but searchtools.js splits a query only at spaces and punctuation: 长度外推 or
 * 「RoPE的外推」 was one word, found only if the index held exactly it. Here a query is cut the way the
 * index was cut: first the community's other names for the book's terms become the book's (基数 ->
 * 底数, 长度外推 -> 外推, token -> 词元: ROPE_SYNONYMS, from locales/zh_CN/terms.csv's "variants" and
 * English columns); then each run of Chinese characters is cut by longest match against the index's
 * own words (terms and title terms), and what matches no word (的, 和: the index keeps no
 * one-character word) is dropped. Latin words are left to searchtools.js as before.
 */
var ROPE_SYNONYMS = /*SYNONYMS*/{};

var ROPE_LONGEST_WORD = 12;

function ropeIndexWords() {
  var index = typeof Search !== "undefined" && Search._index ? Search._index : null;
  if (!index) return null;
  return function (word) {
    return Object.prototype.hasOwnProperty.call(index.terms, word) ||
      Object.prototype.hasOwnProperty.call(index.titleterms, word);
  };
}

/** ``text`` with each synonym replaced by the book's term (longest first; Latin ones as whole words). */
function ropeSynonyms(text) {
  var names = Object.keys(ROPE_SYNONYMS).sort(function (a, b) { return b.length - a.length; });
  var out = text;
  names.forEach(function (name) {
    var escaped = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    var latin = /^[\x00-\x7f]+$/.test(name);
    var pattern = latin ? new RegExp("(^|[^A-Za-z0-9_])" + escaped + "(?:e?s)?(?![A-Za-z0-9_])", "gi")
      : new RegExp(escaped, "g");
    out = out.replace(pattern, function (m, before) {
      return (latin ? before : "") + " " + ROPE_SYNONYMS[name] + " ";
    });
  });
  return out;
}

/** A run of Chinese characters as the index's words, longest match first from the left. */
function ropeCut(run, known) {
  if (!known) return [run];
  var out = [];
  var i = 0;
  while (i < run.length) {
    var found = 0;
    for (var n = Math.min(ROPE_LONGEST_WORD, run.length - i); n >= 2; n--) {
      if (known(run.substr(i, n))) { found = n; break; }
    }
    if (found) {
      out.push(run.substr(i, found));
      i += found;
    } else {
      i += 1;   // a character the index has no word for here
    }
  }
  return out;
}

var splitQuery = function (query) {
  var known = ropeIndexWords();
  var out = [];
  ropeSynonyms(query).split(/[^\p{Letter}\p{Number}_\p{Emoji_Presentation}]+/u).forEach(function (word) {
    if (!word) return;
    (word.match(/\p{Script=Han}+|[^\p{Script=Han}]+/gu) || []).forEach(function (part) {
      if (/\p{Script=Han}/u.test(part)) out.push.apply(out, ropeCut(part, known));
      else out.push(part);
    });
  });
  return out.filter(function (w, k) { return out.indexOf(w) === k; });
};
