/* publish_azure.c - the Azure Blob Storage publisher (seed 000's BlobPublisher). */
#include "autoconf.h"

#include "err.h"
#include "publish.h"

int
publish_azure(const struct config_publisher *p, const struct publish_src *src,
	      struct publish_out *out, char *why, size_t why_len)
{
	uint64_t size;

	(void)out;
	if (publish_check(p, src, &size, why, why_len) == -1)
		return -1;
	return err_set(why, why_len, "publisher %s: azure_blob uploads are not implemented yet",
		       p->name);
}
