/* Both editions' search (_ext/editions.py appends this to each site's language_data.js, which
 * search.html loads after searchtools.js): a result's snippet is its page's text from its start,
 * not the link to the other edition above the title ("Read this page in English", "阅读本页中文版"). */
if (typeof Search !== "undefined" && !Search.ropeEditionsRemoved) {
  var ropePlainText = Search.htmlToText;
  Search.htmlToText = function (html, anchor) {
    return ropePlainText(html.replace(/<p class="rope-editions"[^]*?<\/p>/, ""), anchor);
  };
  Search.ropeEditionsRemoved = true;
}
