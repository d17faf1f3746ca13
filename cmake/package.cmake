# The Debian package (docs/install.md): CPack's DEB generator over the install rules, so the
# package holds exactly what `cmake --install` installs. scripts/package.sh configures a
# build for the /usr prefix and runs `cpack -G DEB` in it.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME vsched)
set(CPACK_PACKAGE_VENDOR "vsched")
set(CPACK_PACKAGE_CONTACT "vsched maintainers <vsched@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "performance-targeted, feedback-controlled real-time scheduling for Linux clusters")
set(CPACK_PACKAGE_DESCRIPTION
    "vsched runs every process of a parallel job under a periodic real-time reservation and
tunes the reservations until each job runs at the target execution rate an administrator
set. The package holds the node scheduler (vsched), the node agent (vsched-agent), the
cluster controller (vsched-controller), vschedctl, libapprate (shared, static, header,
pkg-config and CMake files), libapprate-mpi and the Slurm SPANK plugin when they were built,
example configurations in /etc/vsched, systemd units and man pages.")
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
# Depends: from the shared libraries the binaries link (dpkg-shlibdeps, in dpkg-dev).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# shlibs for packages built against libapprate; ldconfig on install (CPack's postinst)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
set(CPACK_STRIP_FILES ON)
# The configurations are conffiles (kept on remove and upgrade if edited, gone on purge);
# purge also removes the controller's state directory (created by its systemd unit).
set(_conffiles "")
foreach(conf vsched agent controller)
  string(APPEND _conffiles "${CMAKE_INSTALL_FULL_SYSCONFDIR}/vsched/${conf}.conf\n")
endforeach()
file(WRITE ${CMAKE_BINARY_DIR}/debian/conffiles "${_conffiles}")
# (A postrm of our own replaces CPack's, which would only run ldconfig: so it does too.)
file(WRITE ${CMAKE_BINARY_DIR}/debian/postrm "#!/bin/sh\nset -e\n"
     "if [ \"$1\" = remove ] || [ \"$1\" = purge ]; then ldconfig; fi\n"
     "if [ \"$1\" = purge ]; then rm -rf /var/lib/vsched; fi\n")
file(CHMOD ${CMAKE_BINARY_DIR}/debian/postrm PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE
     GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${CMAKE_BINARY_DIR}/debian/conffiles ${CMAKE_BINARY_DIR}/debian/postrm)
include(CPack)
