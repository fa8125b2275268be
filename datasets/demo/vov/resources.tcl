# Resource maps: one spice licence; hsim jobs (the tool) need an hsim licence and Linux; "fast" is a
# big-memory or a fast-disk machine; two maps that point at each other.
vtk_resourcemap_set License:spice 1
vtk_resourcemap_set Tool:hsim 2 -map "License:hsim linux64"
vtk_resourcemap_set License:hsim 5
vovresourcemgr set fast -map "RAMTOTAL#32000 | diskio"
vovresourcemgr set loopa -map "loopb"
vovresourcemgr set loopb -map "loopa"
