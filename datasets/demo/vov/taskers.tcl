# A small Altair Accelerator farm (colmatch --format vov): three Linux taskers and a Solaris one.
set linux "linux64 RAMTOTAL#64000 RAM/64000"
vtk_tasker_set_defaults -CPUS 8 -power 1
vtk_tasker_define lnx01 -resources "$linux diskio" -power 4
vtk_tasker_define lnx02 -resources "$linux" -power 3
vtk_tasker_define lnx03 -resources "linux64 RAMTOTAL#16000 RAM/16000" -CPUS 4 -power 2
foreach h {sol01} {
  vtk_tasker_define $h -resources "solaris RAMTOTAL#32000 RAM/32000" -CPUS 2
}
