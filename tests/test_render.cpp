// `stagger render`: the image shows the bodies where they are, lit from above, over the floor; bad
// state files and options are refused with exit 2.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <fstream>

#include "cli_helpers.h"
#include "output/render.h"
#include "scene/scene.h"

using namespace stagger;

namespace {

Bodies one_body(const std::string& shape) {
  return Bodies::from_scene(parse_scene(R"({"time_step": 0.01, "steps": 1, "bodies": [
    {"id": "floor", "shape": {"type": "plane"}, "fixed": true},
    {"id": "body", "shape": )" + shape + R"(, "mass": 1, "position": [0, 0, 1]}]})", "one.json"));
}

Vec3d pixel(const Image& im, int x, int y) {
  const unsigned char* p = &im.rgb[3 * (size_t(y) * im.width + x)];
  return Vec3d{p[0] / 255.0, p[1] / 255.0, p[2] / 255.0};
}

double brightness(Vec3d c) { return c.x + c.y + c.z; }

}  // namespace

TEST_CASE("a rendered sphere sits in the middle of the picture, lit from above", "[render]") {
  for (RenderView view : {RenderView::iso, RenderView::front, RenderView::top}) {
    CAPTURE(int(view));
    Image im = render_bodies(one_body(R"({"type": "sphere", "radius": 0.5})"), Vec3d{0, 0, 1}, 200, 150, view);
    REQUIRE(im.rgb.size() == 200u * 150u * 3u);
    Vec3d centre = pixel(im, 100, 75), corner = pixel(im, 2, 2);
    REQUIRE(centre.z > centre.x + 0.2);                                        // the dynamic body's blue
    REQUIRE(std::fabs(corner.x - corner.y) < 0.05);                            // grey background, no body
    if (view != RenderView::top) REQUIRE(brightness(pixel(im, 100, 50)) > brightness(pixel(im, 100, 100)));
  }
}

TEST_CASE("a rendered box covers the middle of the picture, the floor shows below it", "[render]") {
  Image im = render_bodies(one_body(R"({"type": "box", "half_extents": [0.5, 0.5, 0.5]})"), Vec3d{0, 0, 1}, 200, 150,
                           RenderView::iso);
  Vec3d centre = pixel(im, 100, 75);
  REQUIRE(centre.x > centre.z);  // the dynamic box's wood colour, not the background
  // The floor is drawn only under the bodies' footprint: the bottom rows show it, not the sky.
  bool floor_seen = false;
  for (int x = 0; x < 200; ++x) floor_seen = floor_seen || brightness(pixel(im, x, 148)) < 2.2;
  REQUIRE(floor_seen);
}

TEST_CASE("render refuses bad state files and options with exit 2", "[render][cli]") {
  namespace fs = std::filesystem;
  fs::path dir = test::temp_dir("render");
  fs::path scene = test::write_scene(dir, "s.json", R"({"time_step": 0.01, "steps": 1, "bodies": [
    {"id": "floor", "shape": {"type": "plane"}, "fixed": true},
    {"id": "ball", "shape": {"type": "sphere", "radius": 0.1}, "mass": 1, "position": [0, 0, 0.1]}]})");
  int files = 0;
  auto state = [&](const std::string& text) {  // a new file each time: the cases below are built first
    fs::path f = dir / ("state" + std::to_string(files++) + ".csv");
    std::ofstream(f) << text;
    return f.string();
  };
  const std::string header = "id,x,y,z,qw,qx,qy,qz,vx,vy,vz,wx,wy,wz\n";
  const std::string good = header + "floor,0,0,0,1,0,0,0,0,0,0,0,0,0\nball,0,0,0.5,1,0,0,0,0,0,0,0,0,0\n";
  std::string png = (dir / "out.png").string();

  test::Outcome ok = test::stagger("render " + scene.string() + " --state " + state(good) + " --out " + png + " --size 64x48", dir);
  REQUIRE(ok.code == 0);
  std::string bytes = test::slurp(png);
  REQUIRE(bytes.size() > 24);
  REQUIRE(bytes.substr(1, 3) == "PNG");
  auto be32 = [&](int at) {
    return (unsigned(uint8_t(bytes[at])) << 24) | (unsigned(uint8_t(bytes[at + 1])) << 16) |
           (unsigned(uint8_t(bytes[at + 2])) << 8) | unsigned(uint8_t(bytes[at + 3]));
  };
  REQUIRE(be32(16) == 64u);  // IHDR width and height
  REQUIRE(be32(20) == 48u);

  // A state written by `stagger run`, with ids that CSV must quote, renders.
  fs::path odd = test::write_scene(dir, "odd.json", R"({"time_step": 0.01, "steps": 2, "bodies": [
    {"id": "floor, the", "shape": {"type": "plane"}, "fixed": true},
    {"id": "say \"hi\"", "shape": {"type": "sphere", "radius": 0.1}, "mass": 1, "position": [0, 0, 0.1]}]})");
  REQUIRE(test::stagger("run " + odd.string() + " --quiet --out " + (dir / "odd").string(), dir).code == 0);
  REQUIRE(test::stagger("render " + odd.string() + " --state " + (dir / "odd" / "final_state.csv").string() +
                            " --out " + (dir / "odd.png").string(),
                        dir)
              .code == 0);

  struct Bad {
    std::string args, message;
  };
  for (const Bad& bad : {
           Bad{"--state " + state(header + "floor,0,0,0,1,0,0,0,0,0,0,0,0,0\n"), "body \"ball\" of the scene is missing"},
           Bad{"--state " + state(good + "ghost,0,0,0,1,0,0,0,0,0,0,0,0,0\n"), "line 4: the scene has no body \"ghost\""},
           Bad{"--state " + state(header + "ball,0,0,nan,1,0,0,0\n"), "line 2: \"nan\" is not a finite number"},
           Bad{"--state " + state("x,y\n"), "line 1: expected the header"},
           Bad{"--state " + (dir / "missing.csv").string(), "cannot read"},
           Bad{"--state " + state(""), "empty: expected the header"},  // not "body ... is missing"
           Bad{"--state " + dir.string(), "a directory, not a state CSV"},
           Bad{"--view sideways", "--view: unknown view"},
           Bad{"--state " + state(good + "ball,0,0,0.7,1,0,0,0,0,0,0,0,0,0\n"), "line 4: body \"ball\" has a row already"},
           Bad{"--state " + state(header + "floor,0,0,0,1,0,0,0,0,0,0,0,0,0\nball,0,0,1.5abc,1,0,0,0,0,0,0,0,0,0\n"),
               "line 3: \"1.5abc\" is not a finite number"},
           Bad{"--view top --cut", "--cut: a top view has no near half"},
           Bad{"--size 10x10", "--size: expected WIDTHxHEIGHT (16x16 .. 8192x8192), got \"10x10\""},
           Bad{"--size big", "--size: expected WIDTHxHEIGHT"},
           Bad{"--size 100x100x7", "got \"100x100x7\""},
           Bad{"--size 100x100abc", "got \"100x100abc\""},
           Bad{"--size 4294967312x16", "got \"4294967312x16\""},  // not 16x16 by wrapping around
       }) {
    CAPTURE(bad.args);
    test::Outcome r = test::stagger("render " + scene.string() + " " + bad.args + " --out " + (dir / "bad.png").string(), dir);
    REQUIRE(r.code == 2);
    REQUIRE(r.err.find("error: ") == 0);
    REQUIRE(r.err.find(bad.message) != std::string::npos);
    REQUIRE_FALSE(fs::exists(dir / "bad.png"));
  }

  // An --out that is not a file to replace is refused before drawing; a link is written through.
  fs::create_directory(dir / "adir");
  REQUIRE(::mkfifo((dir / "fifo").c_str(), 0600) == 0);
  for (const Bad& bad : {Bad{(dir / "adir").string(), "is a directory, not a regular file"},
                         Bad{(dir / "fifo").string(), "is a device, pipe or socket, not a regular file"},
                         Bad{(dir / "nowhere" / "x.png").string(), "no directory"}}) {
    CAPTURE(bad.args);
    test::Outcome r = test::stagger("render " + scene.string() + " --size 64x48 --out " + bad.args, dir);
    REQUIRE(r.code == 2);
    REQUIRE(r.err.find("error: --out: ") == 0);
    REQUIRE(r.err.find(bad.message) != std::string::npos);
  }
  REQUIRE(fs::is_directory(dir / "adir"));
  REQUIRE(fs::is_fifo(dir / "fifo"));
  fs::create_symlink("picture.png", dir / "link.png");  // dangling until the picture is written
  REQUIRE(test::stagger("render " + scene.string() + " --size 64x48 --out " + (dir / "link.png").string(), dir).code == 0);
  REQUIRE(fs::is_symlink(dir / "link.png"));
  REQUIRE(test::slurp(dir / "picture.png").substr(1, 3) == "PNG");
  fs::remove_all(dir);
}
