DROP INDEX "file_jobs_status_lease";--> statement-breakpoint
DROP INDEX "file_jobs_status_id";--> statement-breakpoint
DROP INDEX "file_jobs_chat_id";--> statement-breakpoint
DROP INDEX "file_jobs_expires";--> statement-breakpoint
DROP INDEX "file_jobs_sha";--> statement-breakpoint
CREATE INDEX "file_jobs_accepted" ON "file_jobs" USING btree ("id") WHERE "file_jobs"."status" = 'accepted';--> statement-breakpoint
CREATE INDEX "file_jobs_processable" ON "file_jobs" USING btree ("id") WHERE "file_jobs"."status" IN ('fetched', 'processing');--> statement-breakpoint
CREATE INDEX "file_jobs_ready_expires" ON "file_jobs" USING btree ("result_expires_at") WHERE "file_jobs"."status" = 'ready';--> statement-breakpoint
CREATE INDEX "file_jobs_ready_sha" ON "file_jobs" USING btree ("chat_id","sha256") WHERE "file_jobs"."status" = 'ready';