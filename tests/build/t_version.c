/* Prints the version as the installed header states it and as the library
 * reports it, so check_build.sh can compare both with configure's. */
#include <stdio.h>
#include <symrail.h>

int main(void)
{
    int major = -1, minor = -1, patch = -1;
    symrail_version(&major, &minor, &patch);
    printf("header %d.%d.%d %s\n", SYMRAIL_VERSION_MAJOR, SYMRAIL_VERSION_MINOR,
           SYMRAIL_VERSION_PATCH, SYMRAIL_VERSION_STRING);
    printf("library %d.%d.%d %s\n", major, minor, patch, symrail_version_string());
    return 0;
}
