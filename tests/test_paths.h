#pragma once
// Where the repository's sources and the stagger binary are. tests/CMakeLists.txt writes them into one
// generated file (test_paths.cpp in the build tree), not into every test file's compile definitions:
// the test files then compile to the same thing in every checkout, and ccache (CMakeLists.txt, base_dir)
// serves a fresh clone's build, CI's, from an earlier build's objects. (Global names: the CLI tests
// call a function `stagger`, which a namespace of that name would make ambiguous.)
extern const char* const kStaggerSourceDir;
extern const char* const kStaggerBinary;

#define STAGGER_SOURCE_DIR (::kStaggerSourceDir)
#define STAGGER_BINARY (::kStaggerBinary)
