// Command publishmodules writes Go modules from directories of this tree
// into a module proxy directory, in the layout GOPROXY=file://DIR serves
// (<module>/@v/list, <version>.info, .mod and .zip, the zip made by
// golang.org/x/mod/zip as the go command and the public proxies make it).
// hack/publish-modules.sh runs it on the staging modules; hack/
// test-modules.sh fetches them from the result as an importer would.
//
// A module is refused when its go.mod has a replace directive (an importer
// never sees one) or requires another module of the set at a version other
// than the one being published (its go.mod would name a version that does
// not exist); a version already in the directory is refused too, since a
// published version never changes.
package main
